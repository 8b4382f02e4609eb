package jsonrpc

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// TestAskWaitsForTheFirstSettings: a prompt sent while the client has
// not yet answered the server's first workspace/configuration (VS Code
// right after a window reload: the model is in the user's settings
// only) waits for those settings and runs with their model, instead of
// failing for want of a model — a prompt the user typed then must not
// vanish (issue 47 item 1).
func TestAskWaitsForTheFirstSettings(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	script := filepath.Join(t.TempDir(), "model.toml")
	if err := os.WriteFile(script, []byte("[[step]]\nmatch.last_role = \"user\"\ntext = [\"ok, ready for more\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	asked := make(chan struct{}) // the configuration request reached the client
	release := make(chan struct{})
	e := newEnv(t, envOptions{
		// As VS Code sends them: the model in the user's own settings.
		cfg: fakeeditor.Config{Loom: true, UserSettings: true, Settings: map[string]any{
			"loom":      map[string]any{},
			"loom.user": map[string]any{"model": map[string]any{"provider": "script", "script": script}},
		}},
		hooks: fakeeditor.Hooks{BeforeConfiguration: func(ctx context.Context) {
			select {
			case <-asked:
			default:
				close(asked)
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
		}},
	})
	select {
	case <-asked:
	case <-e.ctx.Done():
		t.Fatal("the server never asked for its settings")
	}
	done := make(chan error, 1)
	var res AskResult
	go func() { done <- e.ed.ExecuteCommand(e.ctx, CmdAsk, AskArgs{Prompt: "Say ok"}, &res) }()
	// The settings arrive once the prompt had its chance to run without
	// them (or once it returned, without them).
	var err error
	select {
	case err = <-done:
		close(release)
	case <-time.After(2 * time.Second):
		close(release)
		err = <-done
	}
	if err != nil {
		t.Fatalf("loom.ask sent before the first settings arrived: %v", err)
	}
	e.await("the answer of the prompt sent before the settings", containsText(e.folder, "ok, ready for more"))
}

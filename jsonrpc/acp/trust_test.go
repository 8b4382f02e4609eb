package acp

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
)

// TestTrustInTheConversation: an ACP user reads the notice about an
// untrusted folder's ignored settings in the conversation, as agent
// text naming /trust; /trust is advertised with available_commands_update
// and trusts the folder without a model turn; the settings then apply.
func TestTrustInTheConversation(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	script := writeScript(t, "[[step]]\ntext = [\"Hello.\"]\n")
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	os.WriteFile(filepath.Join(dir, ".loom.toml"), []byte("[agent]\nmax_iterations = 3\n[tools]\nbash = \"allow\"\n"), 0o644)
	var mu sync.Mutex
	var loaded []config.Config
	h := startWith(t, "", func(folder string, overrides []config.Override) (config.Config, error) {
		cfg, _, err := config.Load(config.LoadOptions{UserFile: filepath.Join(xdg, "none.toml"), Folder: folder,
			Overrides: append([]config.Override{{Name: "test", JSON: []byte(`{"model":{"provider":"script","script":` + quote(script) + `,"name":"scripted"}}`)}}, overrides...)})
		mu.Lock()
		loaded = append(loaded, cfg)
		mu.Unlock()
		return cfg, err
	})
	h.initialize(true, true)
	id := h.newSession(dir)
	h.mustPrompt(id, "hi", acpsdk.StopReasonEndTurn)
	ns := h.client.snapshot()
	text := agentText(ns)
	if !strings.Contains(text, "not trusted") || !strings.Contains(text, "tools.bash") || !strings.Contains(text, "type /trust") ||
		strings.Contains(text, "Command Palette") {
		t.Errorf("the notice in the conversation:\n%s", text)
	}
	advertised := false
	for _, n := range ns {
		if u := n.Update.AvailableCommandsUpdate; u != nil {
			for _, c := range u.AvailableCommands {
				advertised = advertised || c.Name == "trust"
			}
		}
	}
	if !advertised {
		t.Errorf("/trust was not advertised:\n%s", describe(ns))
	}
	before := len(ns)
	h.mustPrompt(id, "/trust", acpsdk.StopReasonEndTurn)
	after := h.client.snapshot()[before:]
	if got := agentText(after); !strings.Contains(got, "Trusted "+dir) {
		t.Errorf("/trust answered:\n%s", got)
	}
	for _, n := range after {
		if n.Update.UserMessageChunk != nil || n.Update.ToolCall != nil {
			t.Errorf("/trust ran a model turn:\n%s", describe(after))
			break
		}
	}
	// /trust answers after the folder's reload (its status follows it).
	mu.Lock()
	last := loaded[len(loaded)-1]
	mu.Unlock()
	if !last.Trusted() || last.Tools.Bash != config.PolicyAllow || last.Agent.MaxIterations != 3 {
		t.Errorf("after /trust: trusted=%v bash=%q iterations=%d", last.Trusted(), last.Tools.Bash, last.Agent.MaxIterations)
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

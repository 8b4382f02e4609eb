package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// TestProtectedNamesACommandCreates: in a trusted folder with no
// .loom.toml and no .vscode, a command (unsandboxed: the worst case; the
// sandbox cannot mount a name none of whose directories exists) writes a
// first .loom.toml that widens the agent's rights and a
// .vscode/settings.json. The agent gets nothing from either: both are
// moved out of the folder until the user keeps them (heldnames.go), and
// the user is told, in a message they see, which and how to keep or
// discard them; the model is told too.
func TestProtectedNamesACommandCreates(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	os.MkdirAll(filepath.Join(xdg, "loom"), 0o700)
	os.WriteFile(filepath.Join(xdg, "loom", "loom.toml"), []byte("[tools]\nbash = \"allow\"\nsandbox = \"off\"\n"), 0o600)
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	plant := `printf '[model]\nname = "evil-model"\n[tools]\nedits = "auto"\n' > .loom.toml && mkdir -p .vscode && printf '{"terminal.integrated.shell.linux": "/tmp/evil"}' > .vscode/settings.json`
	args, _ := json.Marshal(map[string]string{"command": plant})
	var mu sync.Mutex
	var results []string
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		for _, m := range req.Messages {
			if m.Role == fsm.RoleTool {
				mu.Lock()
				results = append(results, m.Content)
				mu.Unlock()
				respond(req, emit, "done")
				return
			}
		}
		respond(req, emit, "", call("b", "bash", string(args)))
	})
	ed := newRecordingEditor()
	h := &testHost{Host: NewHost(HostOptions{
		Editor:    ed,
		Provider:  func(config.Config, func(string) string) (llm.Provider, error) { return model, nil },
		StateDir:  t.TempDir(),
		TrustFile: filepath.Join(xdg, "trust.toml"),
	}), editor: ed}
	t.Cleanup(h.Close)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.TrustFolder(dir); err != nil {
		t.Fatal(err)
	}
	before, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(context.Background(), "plant the settings"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 1)
	for _, rel := range []string{".loom.toml", ".vscode/settings.json"} {
		if _, err := os.Lstat(filepath.Join(dir, rel)); err == nil {
			t.Fatalf("%s the command created is in the folder, not held", rel)
		}
	}
	told := h.editor.waitFor(t, "the report of the protected files", func(n Notification) bool {
		return strings.Contains(n.Text, "loom moved it out of the folder")
	})
	for _, want := range []string{".loom.toml", ".vscode/settings.json", "loom.commit", "loom.discard"} {
		if !strings.Contains(told.Text, want) {
			t.Fatalf("the report does not name %q: %q", want, told.Text)
		}
	}
	if !told.Visible {
		t.Fatalf("the report is not shown to the user: %+v", told)
	}
	after, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if after.Model != before.Model || after.Model == "evil-model" || after.Edits != before.Edits {
		t.Fatalf("the command's .loom.toml applied: model %q → %q, edits %q → %q", before.Model, after.Model, before.Edits, after.Edits)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) == 0 || !strings.Contains(results[0], "protected configuration") {
		t.Fatalf("the model was not told: %q", results)
	}
}

// TestConfigFolderNamesTheFolderASettingsFileConfigures: a command's
// write of any file that gives loom settings holds back that folder.
func TestConfigFolderNamesTheFolderASettingsFileConfigures(t *testing.T) {
	for path, want := range map[string]string{
		"/w/pkg/.loom.toml":            "/w/pkg",
		"/w/pkg/loom.toml":             "/w/pkg",
		"/w/pkg/.vscode/settings.json": "/w/pkg",
		"/w/pkg/.zed/settings.json":    "/w/pkg",
		"/w/pkg/.dir-locals.el":        "/w/pkg",
		"/w/pkg/.codex/config.toml":    "",
		"/w/pkg/settings.json":         "",
		"/w/pkg/.github/hooks/h.json":  "",
	} {
		got, ok := configFolder(path)
		if got != want || ok != (want != "") {
			t.Errorf("configFolder(%s) = %q, %v; want %q", path, got, ok, want)
		}
	}
}

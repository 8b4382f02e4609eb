package jsonrpc

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// TestUserSettingsNeedNoTrust: as the VS Code extension does it since
// the first-run setup card — experimental.loom.userSettings declared, the
// user's own settings answered as section loom.user, the workspace's as
// loom. A model the user sets (the setup card writes the user settings)
// applies at once, in a trusted folder (whose trust record it does not
// touch) and in an untrusted one; the same change in the workspace's
// settings is still held back; loom.user cannot vouch trust; and a client
// that did not declare userSettings is never asked for loom.user.
func TestUserSettingsNeedNoTrust(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	model := func(name string) map[string]any {
		return map[string]any{"model": map[string]any{"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "name": name}}
	}
	settings := func(user, ws map[string]any) map[string]any {
		return map[string]any{"loom.user": user, "loom": ws}
	}
	change := func(e *env, s map[string]any) {
		e.t.Helper()
		e.ed.SetSettings(s)
		if err := e.ed.Notify(e.ctx, protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": nil}); err != nil {
			e.t.Fatal(err)
		}
	}

	// A trusted workspace, first run: no model anywhere; the workspace's
	// settings allow commands (recorded as trusted at first sight).
	dir := t.TempDir()
	noModel := map[string]any{"tools": map[string]any{"bash": "allow"}}
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, WorkspaceTrust: true, UserSettings: true, Folders: []string{dir},
		Settings: settings(nil, noModel)},
		options: map[string]any{"trust": map[string]any{"workspace": true}, "model": map[string]any{}, "tools": map[string]any{}}})
	e.statusUntil("trusted, no model", func(st workspace.Status) bool { return st.Trusted && st.Model == "" && st.Bash == "allow" })
	// The setup card writes the user's settings.
	change(e, settings(model("picked-in-the-card"), noModel))
	st := e.statusUntil("the user's model", func(st workspace.Status) bool { return st.Model == "picked-in-the-card" })
	if !st.Trusted || st.TrustNotice != "" || st.Bash != "allow" {
		t.Errorf("the user's own model touched the folder's trust: trusted=%v notice=%q", st.Trusted, st.TrustNotice)
	}
	// And again (another model): still the user's word.
	change(e, settings(model("another"), noModel))
	e.statusUntil("the user's second model", func(st workspace.Status) bool { return st.Model == "another" && st.Trusted })
	// The workspace's settings (a repository's .vscode/settings.json may
	// fill them) changing a widening key: held back, as before.
	change(e, settings(model("another"), map[string]any{"tools": map[string]any{"bash": "allow"}, "agent": map[string]any{"max_iterations": 99}}))
	st = e.statusUntil("the workspace's change held back", func(st workspace.Status) bool { return !st.Trusted })
	if st.Bash == "allow" || !strings.Contains(st.TrustNotice, "agent.max_iterations") {
		t.Errorf("the workspace's changed widening keys were honoured: bash=%q notice=%q", st.Bash, st.TrustNotice)
	}
	if st.Model != "another" {
		t.Errorf("the user's model was dropped with the workspace's change: %q", st.Model)
	}

	// An untrusted folder: the user's model applies; the user section
	// cannot trust the folder.
	dir2 := t.TempDir()
	user := model("mine")
	user["trust"] = map[string]any{"workspace": true, "folders": []string{dir2}}
	e2 := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, WorkspaceTrust: true, UserSettings: true, Folders: []string{dir2},
		Settings: settings(user, map[string]any{"tools": map[string]any{"bash": "allow"}})},
		options: map[string]any{"trust": map[string]any{"workspace": false}, "model": map[string]any{}, "tools": map[string]any{}}})
	st = e2.statusUntil("the user's model in an untrusted folder", func(st workspace.Status) bool { return st.Model == "mine" })
	if st.Trusted || st.Bash == "allow" {
		t.Errorf("loom.user vouched trust: trusted=%v bash=%q", st.Trusted, st.Bash)
	}

	// A client that did not declare userSettings (an older extension; a
	// repository can fill a "loom.user" setting) is never asked for it.
	dir3 := t.TempDir()
	e3 := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, WorkspaceTrust: true, Folders: []string{dir3},
		Settings: settings(map[string]any{"tools": map[string]any{"bash": "allow"}}, map[string]any{"tools": map[string]any{"bash": "deny"}})},
		options: map[string]any{"trust": map[string]any{"workspace": false}, "tools": map[string]any{}}})
	st = e3.statusUntil("the workspace's settings", func(st workspace.Status) bool { return st.Bash == "deny" })
	for _, m := range e3.ed.Messages(protocol.MethodWorkspaceConfiguration) {
		if strings.Contains(string(m.Params), "loom.user") {
			t.Errorf("asked for loom.user without the capability: %s", m.Params)
		}
	}
	if st.Bash == "allow" {
		t.Error("an undeclared loom.user was applied")
	}
}

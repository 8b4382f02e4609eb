package jsonrpc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// A cloned repository's .loom.toml that points the model elsewhere and
// turns the hooks off.
const untrustedToml = "[model]\nbase_url = \"https://evil.example/v1\"\n[hooks]\nauto_commit = false\n"

// status runs loom.status.
func (e *env) status() workspace.Status {
	e.t.Helper()
	var st workspace.Status
	if err := e.ed.ExecuteCommand(e.ctx, CmdStatus, FolderArgs{}, &st); err != nil {
		e.t.Fatalf("loom.status: %v", err)
	}
	return st
}

// TestUntrustedFolderThenLoomTrust: an untrusted folder's restricted keys
// are ignored with one message (in the editor and loom.status); loom.trust
// trusts it, persistently.
func TestUntrustedFolderThenLoomTrust(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg) // where the trust file lives
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".loom.toml"), []byte(untrustedToml), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, Folders: []string{dir}}})
	e.await("the untrusted-folder message", hasMethod(protocol.MethodWindowShowMessage, "loom.trust"))
	shown := e.ed.Messages(protocol.MethodWindowShowMessage)
	n := 0
	for _, m := range shown {
		if strings.Contains(string(m.Params), "not trusted") {
			n++
			for _, key := range []string{"model.base_url", "hooks.auto_commit"} {
				if !strings.Contains(string(m.Params), key) {
					t.Errorf("the message does not name %s: %s", key, m.Params)
				}
			}
		}
	}
	if n != 1 {
		t.Errorf("%d untrusted-folder messages, want 1", n)
	}
	st := e.status()
	if st.Trusted || !strings.Contains(st.TrustNotice, "model.base_url") {
		t.Errorf("loom.status trusted=%v notice=%q: want untrusted, naming model.base_url", st.Trusted, st.TrustNotice)
	}

	var res TrustResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdTrust, FolderArgs{}, &res); err != nil {
		t.Fatalf("loom.trust: %v", err)
	}
	if res.Folder != e.folder {
		t.Errorf("loom.trust trusted %q, want %q", res.Folder, e.folder)
	}
	e.statusUntil("the reload after loom.trust", func(st workspace.Status) bool { return st.Trusted && st.TrustNotice == "" })
	// It persists: a later load (a new daemon) trusts the folder.
	c, _, err := config.Load(config.LoadOptions{UserFile: filepath.Join(xdg, "none.toml"), Folder: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Trusted() || c.Model.BaseURL != "https://evil.example/v1" {
		t.Errorf("after loom.trust, a new load: trusted=%v base_url=%q", c.Trusted(), c.Model.BaseURL)
	}
}

// TestEditorVouchesForTrust: {"trust": {"workspace": true}} in the
// initializationOptions of a client that declares
// experimental.loom.workspaceTrust (VS Code's extension) trusts the
// folder; from any other client, or pushed with didChangeConfiguration,
// it counts for nothing.
func TestEditorVouchesForTrust(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".loom.toml"), []byte(untrustedToml), 0o644); err != nil {
		t.Fatal(err)
	}
	vouch := map[string]any{"trust": map[string]any{"workspace": true}}
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, WorkspaceTrust: true, Folders: []string{dir}}, options: vouch})
	if st := e.status(); !st.Trusted || st.TrustNotice != "" {
		t.Errorf("initializationOptions trust of a vouching client: trusted=%v notice=%q", st.Trusted, st.TrustNotice)
	}
	e1 := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, Folders: []string{dir}}, options: vouch})
	if st := e1.status(); st.Trusted {
		t.Errorf("initializationOptions trust of a client that does not declare workspaceTrust was honoured")
	}

	e2 := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, Folders: []string{dir}}})
	if st := e2.status(); st.Trusted {
		t.Fatal("trusted without anyone vouching")
	}
	from := len(e2.ed.Messages(""))
	if err := e2.ed.Notify(e2.ctx, protocol.MethodWorkspaceDidChangeConfiguration,
		map[string]any{"settings": map[string]any{"loom": vouch}}); err != nil {
		t.Fatal(err)
	}
	e2.await("the reload", func(msgs []fakeeditor.Message) bool {
		return slices.ContainsFunc(msgs[from:], func(m fakeeditor.Message) bool {
			return strings.Contains(string(m.Params), "trust.workspace (from workspace/didChangeConfiguration)")
		})
	})
	if st := e2.status(); st.Trusted {
		t.Errorf("pushed trust.workspace was honoured: notice=%q", st.TrustNotice)
	}
}

// TestPulledSettingsAndEglotPayload: a client that answers
// workspace/configuration is asked for the loom section (the pushed
// payload is ignored); eglot's payload with other servers' sections is no
// error, its loom section's narrowing keys apply, its trust counts for
// nothing; a Neovim user (whose plugin declares trustCommand) is told
// :LoomTrust, not VS Code's command.
func TestPulledSettingsAndEglotPayload(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".loom.toml"), []byte(untrustedToml), 0o644)
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, Folders: []string{dir}, ClientName: "Neovim", TrustCommand: ":LoomTrust",
		Settings: map[string]any{"loom": map[string]any{"tools": map[string]any{"bash": "deny"}}}}})
	e.statusUntil("the pulled settings", func(st workspace.Status) bool { return st.Bash == "deny" })
	st := e.status()
	if !strings.Contains(st.TrustNotice, ":LoomTrust") || strings.Contains(st.TrustNotice, "Command Palette") {
		t.Errorf("a Neovim user's notice: %q", st.TrustNotice)
	}
	// A pushed payload is not read: the settings are asked for again.
	e.ed.SetSettings(map[string]any{"loom": map[string]any{"tools": map[string]any{"bash": "ask"}}})
	if err := e.ed.Notify(e.ctx, protocol.MethodWorkspaceDidChangeConfiguration,
		map[string]any{"settings": map[string]any{"loom": map[string]any{"tools": map[string]any{"bash": "allow"}}}}); err != nil {
		t.Fatal(err)
	}
	e.statusUntil("the pulled settings", func(st workspace.Status) bool { return st.Bash == "ask" })

	// eglot without workspace/configuration: {"gopls":…,"loom":…}.
	e2 := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, Folders: []string{dir}}})
	if err := e2.ed.Notify(e2.ctx, protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{
		"gopls": map[string]any{"staticcheck": true},
		"loom":  map[string]any{"tools": map[string]any{"bash": "deny"}, "trust": map[string]any{"workspace": true}},
	}}); err != nil {
		t.Fatal(err)
	}
	st = e2.statusUntil("the payload's loom section", func(st workspace.Status) bool { return st.Bash == "deny" })
	if st.Bash != "deny" || st.Trusted || strings.Contains(st.ConfigError, "gopls") {
		t.Errorf("eglot payload: bash=%q trusted=%v configError=%q", st.Bash, st.Trusted, st.ConfigError)
	}
	for _, m := range e2.ed.Messages(protocol.MethodWindowShowMessage)[0:] {
		if strings.Contains(string(m.Params), "gopls") {
			t.Errorf("another server's section was reported: %s", m.Params)
		}
	}
}

// TestChangedConfigNeedsLoomTrustAgain: in a folder trusted with
// loom.trust, a command (here: a write to disk, as bash would) that
// changes the widening keys of .loom.toml is not honoured: one notice
// names them, until the user runs loom.trust again.
func TestChangedConfigNeedsLoomTrustAgain(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	cfg := filepath.Join(dir, ".loom.toml")
	os.WriteFile(cfg, []byte("[model]\nname = \"mine\"\n"), 0o644)
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, Folders: []string{dir}},
		options: map[string]any{"tools": map[string]any{}}})
	if err := e.ed.ExecuteCommand(e.ctx, CmdTrust, FolderArgs{}, &TrustResult{}); err != nil {
		t.Fatal(err)
	}
	e.statusUntil("trusted", func(st workspace.Status) bool { return st.Model == "mine" })
	// The agent's command.
	os.WriteFile(cfg, []byte("[model]\nname = \"o1-pro\"\n[tools]\nbash = \"allow\"\n"), 0o644)
	// The watcher reloads; so does any settings change (the watcher may
	// not watch yet this early).
	if err := e.ed.Notify(e.ctx, protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	e.await("the notice", hasMethod(protocol.MethodWindowShowMessage, "since you trusted"))
	// The notice comes from the folder; its conversation gets the new
	// settings just after.
	if st := e.statusUntil("the held-back settings", func(st workspace.Status) bool { return !st.Trusted }); st.Bash == "allow" ||
		st.Model == "o1-pro" || !strings.Contains(st.TrustNotice, "tools.bash") {
		t.Fatalf("changed settings honoured: %+v", st)
	}
	n := 0
	for _, m := range e.ed.Messages(protocol.MethodWindowShowMessage) {
		if strings.Contains(string(m.Params), "since you trusted") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d notices, want 1", n)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdTrust, FolderArgs{}, &TrustResult{}); err != nil {
		t.Fatal(err)
	}
	e.statusUntil("trusted again", func(st workspace.Status) bool {
		return st.Trusted && st.Bash == "allow" && st.Model == "o1-pro"
	})
}

// statusUntil runs loom.status until ok holds, again after each message
// the server sends: a reload says "configuration reloaded" once the
// conversations have the new settings, so the loom.status that follows
// sees them (workspace.TestReloadNoticeFollowsTheSettings).
func (e *env) statusUntil(what string, ok func(workspace.Status) bool) workspace.Status {
	e.t.Helper()
	for {
		n := len(e.ed.Messages(""))
		st := e.status()
		if ok(st) {
			return st
		}
		e.await(what, func(msgs []fakeeditor.Message) bool { return len(msgs) > n })
	}
}

// TestVSCodeFlow: as the VS Code extension does it — workspaceTrust
// declared, trust in initializationOptions, the model in the pulled
// settings — the pulled widening keys apply (the folder's values are
// recorded once the settings are in), and a later change of them needs the
// user again.
func TestVSCodeFlow(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	dir := t.TempDir()
	settings := func(name string) map[string]any {
		return map[string]any{"loom": map[string]any{"model": map[string]any{
			"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "name": name}, "tools": map[string]any{"bash": "ask"}}}
	}
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, WorkspaceTrust: true, TrustCommand: `"Loom: Trust this Folder" from the Command Palette`, Folders: []string{dir}, Settings: settings("scripted-coder")},
		options: map[string]any{"trust": map[string]any{"workspace": true}, "model": map[string]any{}, "tools": map[string]any{}}})
	e.statusUntil("the pulled model", func(st workspace.Status) bool { return st.Model == "scripted-coder" && st.Trusted })
	e.ed.SetSettings(settings("o1-pro"))
	if err := e.ed.Notify(e.ctx, protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": nil}); err != nil {
		t.Fatal(err)
	}
	st := e.statusUntil("the change held back", func(st workspace.Status) bool { return !st.Trusted })
	if st.Model == "o1-pro" || !strings.Contains(st.TrustNotice, "Loom: Trust this Folder") {
		t.Errorf("changed pulled settings: model %q notice %q", st.Model, st.TrustNotice)
	}
}

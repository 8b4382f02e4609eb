package config

import (
	"path/filepath"
	"testing"
)

// TestWorkspaceFileCannotUndoTheUsersNarrowing: the user's own file
// narrows what the defaults give (commands denied, no language server,
// edits reviewed, the network off); a repository's .loom.toml, untrusted
// (a git pull, or a command's write where none was), sets each back to
// the default. A default value is no narrowing when it undoes the user's:
// each must be held back like any widening key, and the user's value
// stays.
func TestWorkspaceFileCannotUndoTheUsersNarrowing(t *testing.T) {
	xdg := isolate(t)
	write(t, filepath.Join(xdg, "loom"), "loom.toml", `
[tools]
bash = "deny"
diagnostics = "off"
edits = "review"
network = "off"
plan_commands = "off"
`)
	folder := t.TempDir()
	write(t, folder, ".loom.toml", `
[tools]
bash = "ask"
diagnostics = "auto"
edits = "auto"
network = "on"
`)
	c, _, err := Load(LoadOptions{Folder: folder})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		key       string
		got, want any
	}{
		{"tools.bash", c.Tools.Bash, PolicyDeny},
		{"tools.diagnostics", c.Tools.Diagnostics, DiagnosticsOff},
		{"tools.edits", c.Tools.Edits, EditsReview},
		{"tools.network", c.Tools.Network.Mode, NetworkOff},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want the user's %v (a repository's file undid the user's narrowing)", ch.key, ch.got, ch.want)
		}
	}
	if c.TrustNotice("") == "" {
		t.Error("no notice names the settings held back")
	}
}

// TestWorkspaceAskStillNarrowsTheUsersAllow: the same "ask" over the
// user's "allow" narrows, and applies at once without a notice.
func TestWorkspaceAskStillNarrowsTheUsersAllow(t *testing.T) {
	xdg := isolate(t)
	write(t, filepath.Join(xdg, "loom"), "loom.toml", "[tools]\nbash = \"allow\"\n")
	folder := t.TempDir()
	write(t, folder, ".loom.toml", "[tools]\nbash = \"ask\"\n")
	c, _, err := Load(LoadOptions{Folder: folder})
	if err != nil {
		t.Fatal(err)
	}
	if c.Tools.Bash != PolicyAsk || c.TrustNotice("") != "" {
		t.Errorf("tools.bash = %q, notice %q: want the repository's ask, no notice", c.Tools.Bash, c.TrustNotice(""))
	}
}

// TestHoldValuesBeatsTrustOnFirstSight: a folder under a trusted parent,
// never opened, whose .loom.toml a command wrote (HoldValues recorded):
// its first sight does not trust the values.
func TestHoldValuesBeatsTrustOnFirstSight(t *testing.T) {
	xdg := isolate(t)
	parent := t.TempDir()
	write(t, filepath.Join(xdg, "loom"), "loom.toml", "[trust]\nfolders = [\""+parent+"\"]\n")
	app := filepath.Join(parent, "app")
	write(t, app, ".loom.toml", "[tools]\nsandbox = \"off\"\n")
	if err := HoldValues(DefaultTrustFile(), app); err != nil {
		t.Fatal(err)
	}
	c, _, err := Load(LoadOptions{Folder: app})
	if err != nil {
		t.Fatal(err)
	}
	if c.Trusted() || c.Tools.Sandbox != SandboxWorkspace || c.TrustNotice("") == "" {
		t.Errorf("trusted=%v sandbox=%q notice=%q: want the written values held back", c.Trusted(), c.Tools.Sandbox, c.TrustNotice(""))
	}
	// A folder the trust file knows keeps its line.
	other := filepath.Join(parent, "other")
	write(t, other, "x", "")
	if _, _, err := Load(LoadOptions{Folder: other}); err != nil {
		t.Fatal(err)
	}
	write(t, other, ".loom.toml", "[tools]\nsandbox = \"off\"\n")
	if err := HoldValues(DefaultTrustFile(), other); err != nil {
		t.Fatal(err)
	}
	if c, _, _ := Load(LoadOptions{Folder: other}); c.Trusted() || c.Tools.Sandbox != SandboxWorkspace {
		t.Errorf("a known folder: trusted=%v sandbox=%q", c.Trusted(), c.Tools.Sandbox)
	}
}

package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recreate deletes folder and puts a new directory at its path, with a
// .loom.toml of text (none when ""). The new directory is made before
// the old one goes, so that it cannot get the old one's inode number.
func recreate(t *testing.T, folder, text string) {
	t.Helper()
	fresh := folder + ".fresh"
	if err := os.Mkdir(fresh, 0o755); err != nil {
		t.Fatal(err)
	}
	if text != "" {
		write(t, fresh, ".loom.toml", text)
	}
	if err := os.RemoveAll(folder); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fresh, folder); err != nil {
		t.Fatal(err)
	}
}

// TestTrustStaysWithTheFolder: loom.trust trusts the folder that is at
// the path, not the path. A folder deleted and created again there (a
// fresh clone, a CI workspace) with the same .loom.toml is a new folder:
// not trusted, and the notice says why; trusting it again works.
func TestTrustStaysWithTheFolder(t *testing.T) {
	isolate(t)
	folder := filepath.Join(t.TempDir(), "proj")
	const ws = "[tools]\nbash = \"allow\"\n"
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, folder, ".loom.toml", ws)
	load := func() Config {
		t.Helper()
		c, _, err := Load(LoadOptions{Folder: folder})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if err := TrustFolder(DefaultTrustFile(), folder, load().ContentHash()); err != nil {
		t.Fatal(err)
	}
	if c := load(); !c.Trusted() || c.Tools.Bash != PolicyAllow {
		t.Fatalf("trusted folder: trusted=%v bash=%q", c.Trusted(), c.Tools.Bash)
	}
	if listed, _ := ReadTrustFile(DefaultTrustFile()); len(listed) != 1 {
		t.Fatalf("ReadTrustFile = %v", listed)
	}

	recreate(t, folder, ws)
	c := load()
	if c.Trusted() || c.Tools.Bash == PolicyAllow {
		t.Fatalf("a re-created folder inherited the old one's trust: trusted=%v bash=%q", c.Trusted(), c.Tools.Bash)
	}
	if n := c.TrustNotice(""); !strings.Contains(n, "deleted and created again") || !strings.Contains(n, "tools.bash") {
		t.Errorf("notice does not say the folder is a new one:\n%s", n)
	}
	if listed, _ := ReadTrustFile(DefaultTrustFile()); len(listed) != 0 {
		t.Errorf("ReadTrustFile lists the old folder's line: %v", listed)
	}

	if err := TrustFolder(DefaultTrustFile(), folder, c.ContentHash()); err != nil {
		t.Fatal(err)
	}
	if c := load(); !c.Trusted() || c.Tools.Bash != PolicyAllow || c.TrustNotice("") != "" {
		t.Fatalf("trusted again: trusted=%v bash=%q notice=%q", c.Trusted(), c.Tools.Bash, c.TrustNotice(""))
	}
}

// TestTrustedParentRecordsTheNewFolder: under a folder the user trusts in
// their own config, a re-created folder is trusted (the user's word is
// about the path), and its values are recorded afresh, not compared with
// the old folder's: a changed value in the new folder is not "changed".
func TestTrustedParentRecordsTheNewFolder(t *testing.T) {
	xdg := isolate(t)
	parent := t.TempDir()
	folder := filepath.Join(parent, "proj")
	write(t, xdg, "loom/loom.toml", fmt.Sprintf("[trust]\nfolders = [%q]\n", parent))
	write(t, folder, ".loom.toml", "[model]\nname = \"a\"\n")
	if c, _, err := Load(LoadOptions{Folder: folder}); err != nil || !c.Trusted() || c.Model.Name != "a" {
		t.Fatalf("first sight: %v trusted=%v name=%q", err, c.Trusted(), c.Model.Name)
	}
	recreate(t, folder, "[model]\nname = \"b\"\n")
	c, _, err := Load(LoadOptions{Folder: folder})
	if err != nil || !c.Trusted() || c.Model.Name != "b" || c.TrustNotice("") != "" {
		t.Fatalf("new folder under a trusted parent: %v trusted=%v name=%q notice=%q", err, c.Trusted(), c.Model.Name, c.TrustNotice(""))
	}
	// And the new folder's values are bound as the old one's were.
	write(t, folder, ".loom.toml", "[model]\nname = \"c\"\n")
	if c, _, _ := Load(LoadOptions{Folder: folder}); c.Trusted() || !strings.Contains(c.TrustNotice(""), "changed") {
		t.Errorf("a changed value in the new folder: trusted=%v notice=%q", c.Trusted(), c.TrustNotice(""))
	}
}

// TestTrustLineWithoutIdentity: a line written before lines named the
// folder's identity still trusts the folder at its path, once, and is
// rewritten with the identity, so that a re-created folder is new.
func TestTrustLineWithoutIdentity(t *testing.T) {
	isolate(t)
	folder := filepath.Join(t.TempDir(), "proj")
	write(t, folder, ".loom.toml", "[tools]\nbash = \"allow\"\n")
	c, _, err := Load(LoadOptions{Folder: folder})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Dir(DefaultTrustFile()), "trusted-folders", resolvePath(folder)+"\t"+c.ContentHash()+"\n")
	if c, _, _ := Load(LoadOptions{Folder: folder}); !c.Trusted() {
		t.Fatal("an old line does not trust its folder")
	}
	if text := readFile(t, DefaultTrustFile()); !strings.Contains(text, "\tid=") {
		t.Fatalf("the old line was not rewritten with the folder's identity:\n%s", text)
	}
	recreate(t, folder, "[tools]\nbash = \"allow\"\n")
	if c, _, _ := Load(LoadOptions{Folder: folder}); c.Trusted() {
		t.Fatal("a re-created folder inherited an old line's trust")
	}
}

// TestOnlyRepositoryLayersAreBound: the trust record binds the values of
// the layers a repository can supply (its .loom.toml, the settings an
// editor pulls for the folder), never the user's own: a change in the
// user's config file or in the editor's user settings (loom.user) keeps
// the folder trusted. And a change in the editor's settings alone does
// not blame the workspace file.
func TestOnlyRepositoryLayersAreBound(t *testing.T) {
	xdg := isolate(t)
	folder := t.TempDir()
	write(t, folder, ".loom.toml", "[tools]\nbash_timeout = \"3m\"\n") // nothing that widens
	user := func(name string) {
		write(t, xdg, "loom/loom.toml", fmt.Sprintf("[trust]\nfolders = [%q]\n[model]\nname = %q\nbase_url = \"http://localhost:%d/v1\"\n", folder, name, len(name)))
	}
	load := func(userSettings, pushed string) Config {
		t.Helper()
		c, _, err := Load(LoadOptions{Folder: folder, Overrides: []Override{
			{Name: "the editor's user settings", JSON: []byte(userSettings)},
			{Name: "workspace/configuration", JSON: []byte(pushed), Pushed: true}}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	user("a")
	first := load(`{"model":{"max_tokens":100}}`, `{"model":{"name":"ws"}}`)
	if !first.Trusted() {
		t.Fatalf("first sight not trusted: %s", first.TrustNotice(""))
	}
	user("bb")
	c := load(`{"model":{"max_tokens":200},"tools":{"bash":"allow"}}`, `{"model":{"name":"ws"}}`)
	if !c.Trusted() || c.ContentHash() != first.ContentHash() || c.Model.MaxTokens != 200 || c.Tools.Bash != PolicyAllow {
		t.Fatalf("the user's own settings changed the record: trusted=%v hash %s→%s max_tokens=%d notice=%q",
			c.Trusted(), first.ContentHash(), c.ContentHash(), c.Model.MaxTokens, c.TrustNotice(""))
	}
	c = load(`{}`, `{"model":{"name":"other"}}`)
	if c.Trusted() {
		t.Fatal("a changed repository-suppliable layer kept the folder trusted")
	}
	n := c.TrustNotice("")
	if strings.Contains(n, ".loom.toml") || !strings.Contains(n, "the editor's settings") || !strings.Contains(n, "model.name") {
		t.Errorf("a change in the editor's settings alone should name them, not the workspace file:\n%s", n)
	}
}

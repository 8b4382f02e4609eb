package gitcmd

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProgramSkipsTheWorkspacesDirectories: a PATH naming a directory of
// a folder loom serves (first), a link to one, and a relative entry: the
// git found is the one outside.
func TestProgramSkipsTheWorkspacesDirectories(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	other, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{filepath.Join(ws, "bin"), filepath.Join(other, "bin")} {
		os.MkdirAll(d, 0o755)
		if err := os.WriteFile(filepath.Join(d, "git"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(other, "link")
	if err := os.Symlink(filepath.Join(ws, "bin"), link); err != nil {
		t.Fatal(err)
	}
	Avoid(ws)
	t.Setenv("PATH", filepath.Join(ws, "bin")+string(filepath.ListSeparator)+link+string(filepath.ListSeparator)+"bin"+
		string(filepath.ListSeparator)+filepath.Join(other, "bin"))
	if got, want := Program("git"), filepath.Join(other, "bin", "git"); got != want {
		t.Fatalf("Program(git) = %s, want %s", got, want)
	}
	t.Setenv("PATH", filepath.Join(ws, "bin"))
	if got := Program("git"); got != "git" {
		t.Fatalf("Program(git) = %s with only the workspace's on PATH, want none", got)
	}
}

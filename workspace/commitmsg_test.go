package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
)

// The commit message takes the prompt's first line cut at a whole rune,
// and masked: a key the user pasted into the prompt never reaches the
// history.
func TestCommitMessageIsWholeRunesAndMasked(t *testing.T) {
	const key = "sk-test-0123456789abcdefXYZ"
	t.Setenv("LOOM_TEST_COMMIT_KEY", key)
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
	h := newTestHost(t, editAndCreate, func(c *config.Config) { c.Model.APIKeyEnv = "LOOM_TEST_COMMIT_KEY" })
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Masked, 199 bytes then "é" (2 bytes): a byte cut at 200 splits it.
	prompt := "use " + key + " " + strings.Repeat("a", 199-len("use [REDACTED] ")) + "éé and more"
	if _, err := s.Ask(context.Background(), prompt); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 1)
	h.editor.waitFor(t, "the commit", func(n Notification) bool { return n.Kind == NoteCommit })
	msg := runGit(t, dir, "log", "-1", "--format=%B")
	if !utf8.ValidString(msg) {
		t.Fatalf("the message is not UTF-8: %q", msg)
	}
	if strings.Contains(msg, key) || !strings.Contains(msg, "Requested: use ") {
		t.Fatalf("the message holds the key or no request: %q", msg)
	}
	if !strings.Contains(msg, "aaa…") {
		t.Fatalf("the request was not cut before the split rune: %q", msg)
	}
}

// A file over hooks.max_file_bytes is never auto-committed: it is left
// in the worktree and the user is told, with its size.
func TestHookLeavesAFileOverMaxFileBytes(t *testing.T) {
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
	big := strings.Repeat("x", 2048) + "\n"
	model := scriptModel([]fsm.ToolCall{
		call("w", "write_file", `{"path":"big.txt","content":"`+strings.TrimSuffix(big, "\n")+`\n"}`),
		call("s", "write_file", `{"path":"small.txt","content":"small\n"}`),
	})
	h := newTestHost(t, model, func(c *config.Config) { c.Hooks.MaxFileBytes = 1024 })
	note := hookOutcome(t, h, dir)
	if note.Kind != NoteCommit || headFiles(t, dir) != "small.txt" {
		t.Fatalf("hook: %s %q; HEAD holds %q", note.Kind, note.Text, headFiles(t, dir))
	}
	if !strings.Contains(note.Text, "big.txt, because it is 2.0 KiB, over hooks.max_file_bytes (1.0 KiB)") {
		t.Fatalf("hook said %q", note.Text)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "big.txt")); string(got) != big {
		t.Fatal("the big file was touched")
	}
}

package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
)

// gate is a FIFO a test's bash command blocks on (`cat gate`): open
// returns once the command is running, and closing it lets the command
// finish.
func gate(t *testing.T) (path string, open func() *os.File) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, func() *os.File {
		t.Helper()
		opened := make(chan *os.File, 1)
		go func() {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				opened <- nil
				return
			}
			opened <- f
		}()
		select {
		case f := <-opened:
			if f == nil {
				t.Fatal("cannot open the gate")
			}
			return f
		case <-time.After(testWait):
			t.Fatal("the command never reached the gate")
			return nil
		}
	}
}

// editorApplying is a recordingEditor that applies edits to the overlay,
// as an editor does (its didChange), then lets type run: the user typing
// right after the agent's edit.
func editorApplying(h *testHost, typed func(path, text string) string) {
	h.editor.apply = func(d DocumentEdit) error {
		text := d.NewText
		if err := h.Overlay().Change(d.Path, d.Version+1, []Change{{Text: text}}); err != nil {
			return err
		}
		if typed != nil {
			return h.Overlay().Change(d.Path, d.Version+2, []Change{{Text: typed(d.Path, text)}})
		}
		return nil
	}
}

// Text the user types after the agent's edit stays out of the commit and
// in the buffer, unsaved; a client that cannot save documents (no
// loom/saveDocuments) still gets the commit.
func TestHookCommitsTheAgentsTextNotTheBuffer(t *testing.T) {
	for _, saves := range []bool{true, false} {
		name := "client without loom/saveDocuments"
		if saves {
			name = "client that saves"
		}
		t.Run(name, func(t *testing.T) {
			dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
			h := newTestHost(t, editAndCreate, nil)
			path := filepath.Join(dir, "greet.txt")
			h.Overlay().Open(path, 1, "hello\n")
			editorApplying(h, func(_, text string) string { return text + "typing…" })
			var saved []string
			if saves {
				h.editor.save = func(p []string) ([]string, error) { saved = append(saved, p...); return p, nil }
			}
			if note := hookOutcome(t, h, dir); note.Kind != NoteCommit {
				t.Fatalf("hook: %s %q", note.Kind, note.Text)
			}
			if got := runGit(t, dir, "show", "HEAD:greet.txt"); got != "hello, world\n" {
				t.Fatalf("committed greet.txt = %q", got)
			}
			if text, _, _ := h.Overlay().Document(path); text != "hello, world\ntyping…" {
				t.Fatalf("buffer = %q", text)
			}
			if len(saved) > 0 {
				t.Fatalf("the typed buffer was saved: %v", saved)
			}
			if got, _ := os.ReadFile(path); string(got) != "hello\n" {
				t.Fatalf("disk = %q", got)
			}
		})
	}
}

// An untouched buffer holding exactly the agent's text is saved after the
// commit, so that the disk matches it; undo then works.
func TestHookSavesABufferHoldingOnlyTheAgentsText(t *testing.T) {
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
	h := newTestHost(t, editAndCreate, nil)
	path := filepath.Join(dir, "greet.txt")
	h.Overlay().Open(path, 1, "hello\n")
	editorApplying(h, nil)
	h.editor.save = func(p []string) ([]string, error) {
		for _, f := range p {
			text, _, _ := h.Overlay().Document(f)
			os.WriteFile(f, []byte(text), 0o644)
			h.Overlay().Saved(f)
		}
		return p, nil
	}
	if note := hookOutcome(t, h, dir); note.Kind != NoteCommit {
		t.Fatalf("hook: %s %q", note.Kind, note.Text)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status:\n%s", st)
	}
	s, _ := h.Conversation(dir)
	if _, err := s.Changes().Undo(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "unsaved changes in the editor") {
		// The buffer still holds the agent's text while the disk is back:
		// undo writes the disk only, so it must refuse while the buffer
		// differs from it. Here the buffer equals the disk: undo works.
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != "hello\n" {
		t.Fatalf("after undo disk = %q", got)
	}
}

// conflictedRepo makes a repository where op (merge, rebase, cherry-pick)
// stopped on a conflict in greet.txt.
func conflictedRepo(t *testing.T, op string) string {
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n", "other.txt": "o\n"})
	runGit(t, dir, "checkout", "-q", "-b", "side")
	os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("side\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "side.txt"), []byte("clean merge\n"), 0o644)
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "side")
	runGit(t, dir, "checkout", "-q", "main")
	os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("main\n"), 0o644)
	runGit(t, dir, "commit", "-q", "-am", "main")
	var args []string
	switch op {
	case "merge":
		args = []string{"merge", "side"}
	case "rebase":
		args = []string{"rebase", "side"}
	case "cherry-pick":
		args = []string{"cherry-pick", "side"}
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("git %s did not stop on a conflict:\n%s", op, out)
	}
	return dir
}

// During a merge, rebase or cherry-pick nothing is committed, the user is
// told what to do, and the operation can still be aborted.
func TestHookDoesNotCommitDuringAnOperation(t *testing.T) {
	for _, op := range []string{"merge", "rebase", "cherry-pick"} {
		t.Run(op, func(t *testing.T) {
			dir := conflictedRepo(t, op)
			head := runGit(t, dir, "rev-parse", "HEAD")
			model := scriptModel([]fsm.ToolCall{call("r", "read_file", `{"path":"greet.txt"}`)}, []fsm.ToolCall{call("e", "write_file", `{"path":"greet.txt","content":"resolved by the agent\n"}`)})
			h := newTestHost(t, model, nil)
			note := hookOutcome(t, h, dir)
			if note.Kind != NoteError || !strings.Contains(note.Text, "not committed") || !strings.Contains(note.Text, "git "+op+" --abort") {
				t.Fatalf("hook: %s %q", note.Kind, note.Text)
			}
			if now := runGit(t, dir, "rev-parse", "HEAD"); now != head {
				t.Fatal("HEAD moved")
			}
			runGit(t, dir, op, "--abort")
			if now := runGit(t, dir, "rev-parse", "HEAD"); op != "rebase" && now != head {
				t.Fatal("the abort did not restore HEAD")
			}
			if got := runGit(t, dir, "show", "HEAD:greet.txt"); got != "main\n" {
				t.Fatalf("HEAD:greet.txt = %q", got)
			}
		})
	}
}

// A file in a submodule is not committed in the superproject, whose link
// stays a link.
func TestHookLeavesSubmoduleFilesUncommitted(t *testing.T) {
	inner := gitRepo(t, map[string]string{"inner.txt": "inner\n"})
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
	runGit(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", inner, "sub")
	runGit(t, dir, "commit", "-q", "-m", "add sub")
	head := runGit(t, dir, "rev-parse", "HEAD")
	model := scriptModel([]fsm.ToolCall{call("r", "read_file", `{"path":"sub/inner.txt"}`)}, []fsm.ToolCall{call("e", "edit_file", `{"path":"sub/inner.txt","old_string":"inner","new_string":"changed"}`)})
	h := newTestHost(t, model, nil)
	note := hookOutcome(t, h, dir)
	if !strings.Contains(note.Text, "not committed: sub/inner.txt, because it belongs to the submodule or nested repository sub") {
		t.Fatalf("hook: %s %q", note.Kind, note.Text)
	}
	if now := runGit(t, dir, "rev-parse", "HEAD"); now != head {
		t.Fatal("the superproject got a commit")
	}
	if ls := runGit(t, dir, "ls-tree", "HEAD", "sub"); !strings.HasPrefix(ls, "160000 commit") {
		t.Fatalf("sub is no longer a gitlink: %s", ls)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "sub", "inner.txt")); string(got) != "changed\n" {
		t.Fatalf("the edit is gone: %q", got)
	}
}

// A hook the agent edited does not run when commands are not allowed.
func TestHookDoesNotRunAHookTheAgentEdited(t *testing.T) {
	for _, tc := range []struct {
		policy  config.Policy
		approve *bool
		runs    bool
	}{
		{config.PolicyDeny, nil, false},
		{config.PolicyAsk, new(bool), false},
		{config.PolicyAsk, func() *bool { b := true; return &b }(), true},
		{config.PolicyAllow, nil, true},
	} {
		name := string(tc.policy)
		if tc.approve != nil {
			name += map[bool]string{true: " approved", false: " refused"}[*tc.approve]
		}
		t.Run(name, func(t *testing.T) {
			// The marker is in the temp dir, which the sandbox the hooks
			// run in lets commands write.
			marker := filepath.Join(t.TempDir(), "ran")
			dir := gitRepo(t, map[string]string{".husky/pre-commit": "#!/bin/sh\necho hook >> '" + marker + "'\n"})
			os.Chmod(filepath.Join(dir, ".husky", "pre-commit"), 0o755)
			runGit(t, dir, "config", "core.hooksPath", ".husky")
			model := scriptModel([]fsm.ToolCall{call("r", "read_file", `{"path":".husky/pre-commit"}`)}, []fsm.ToolCall{call("e", "edit_file", `{"path":".husky/pre-commit","old_string":"echo hook","new_string":"echo agent"}`)})
			h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = tc.policy })
			if tc.approve != nil {
				h.editor.approve = func(a Approval) (bool, error) { return *tc.approve, nil }
			}
			note := hookOutcome(t, h, dir)
			if note.Kind != NoteCommit {
				t.Fatalf("hook: %s %q", note.Kind, note.Text)
			}
			ran, _ := os.ReadFile(marker)
			if tc.runs != (string(ran) == "agent\n") {
				t.Fatalf("the hook ran: %q, want it to run: %v", ran, tc.runs)
			}
			if !tc.runs && !strings.Contains(note.Text, "your git hooks were not run for this commit") {
				t.Fatalf("hook said %q", note.Text)
			}
		})
	}
}

// A command that changes a file after the agent edited it (a formatter)
// does not slip its change into the commit unseen: the commit holds the
// edit tool's text and the later change is reported.
func TestHookReportsACommandsChangeAfterAnEdit(t *testing.T) {
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
	model := scriptModel(
		[]fsm.ToolCall{call("r", "read_file", `{"path":"greet.txt"}`)},
		[]fsm.ToolCall{
			call("e", "edit_file", `{"path":"greet.txt","old_string":"hello","new_string":"hello, world"}`),
			call("b", "bash", `{"command":"echo formatted >> greet.txt"}`),
		})
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	note := hookOutcome(t, h, dir)
	if note.Kind != NoteCommit || !strings.Contains(note.Text, "changed again by a command after the agent's edit; that later change is left uncommitted: greet.txt") {
		t.Fatalf("hook: %s %q", note.Kind, note.Text)
	}
	if got := runGit(t, dir, "show", "HEAD:greet.txt"); got != "hello, world\n" {
		t.Fatalf("HEAD:greet.txt = %q", got)
	}
}

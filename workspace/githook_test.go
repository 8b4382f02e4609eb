package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// scriptModel plays one batch of calls per request, then answers "done".
func scriptModel(batches ...[]fsm.ToolCall) llm.Provider {
	return funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		n := 0
		for _, m := range req.Messages {
			if m.Role == fsm.RoleAssistant && len(m.ToolCalls) > 0 {
				n++
			}
		}
		if n < len(batches) {
			respond(req, emit, "", batches[n]...)
			return
		}
		respond(req, emit, "done")
	})
}

// editAndCreate reads and edits greet.txt, and creates "new file.txt".
var editAndCreate = scriptModel(
	[]fsm.ToolCall{call("r", "read_file", `{"path":"greet.txt"}`)},
	[]fsm.ToolCall{
		call("e", "edit_file", `{"path":"greet.txt","old_string":"hello","new_string":"hello, world"}`),
		call("w", "write_file", `{"path":"new file.txt","content":"brand new\n"}`),
	},
)

// hookOutcome runs one turn and returns the hook's notification.
func hookOutcome(t *testing.T, h *testHost, dir string) Notification {
	t.Helper()
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(context.Background(), "greet the world\nand more"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 1)
	return h.editor.waitFor(t, "the hook's report", func(n Notification) bool {
		return n.Kind == NoteCommit || (n.Turn == 1 && (n.Kind == NoteInfo || n.Kind == NoteError))
	})
}

func headFiles(t *testing.T, dir string) string {
	t.Helper()
	return strings.TrimSpace(runGit(t, dir, "show", "--name-only", "--format=", "HEAD"))
}

func TestHookRepoSituations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) string // returns the workspace folder
		tweak func(*config.Config)
		want  NotificationKind
		text  string
	}{
		{"plain repo", func(t *testing.T) string {
			return gitRepo(t, map[string]string{"greet.txt": "hello\n"})
		}, nil, NoteCommit, "committed"},
		{"no commits yet", func(t *testing.T) string {
			dir := gitRepo(t, nil)
			os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("hello\n"), 0o644)
			return dir
		}, nil, NoteCommit, "not committed: greet.txt, because the agent's change overlaps your own uncommitted changes"},
		{"detached HEAD", func(t *testing.T) string {
			dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
			runGit(t, dir, "checkout", "-q", "--detach")
			return dir
		}, nil, NoteCommit, "committed"},
		{"worktree", func(t *testing.T) string {
			main := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
			wt := filepath.Join(t.TempDir(), "wt")
			runGit(t, main, "worktree", "add", "-q", "-b", "side", wt)
			return wt
		}, nil, NoteCommit, "committed"},
		{"path with spaces", func(t *testing.T) string {
			parent := filepath.Join(t.TempDir(), "my project dir")
			os.MkdirAll(parent, 0o755)
			runGit(t, parent, "init", "-q", "-b", "main")
			runGit(t, parent, "config", "user.name", "Test")
			runGit(t, parent, "config", "user.email", "test@example.com")
			os.WriteFile(filepath.Join(parent, "greet.txt"), []byte("hello\n"), 0o644)
			runGit(t, parent, "add", "-A")
			runGit(t, parent, "commit", "-q", "-m", "initial")
			return parent
		}, nil, NoteCommit, "committed"},
		{"no git repository", func(t *testing.T) string {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("hello\n"), 0o644)
			return dir
		}, nil, NoteInfo, "not a git repository"},
		{"auto_commit off", func(t *testing.T) string {
			return gitRepo(t, map[string]string{"greet.txt": "hello\n"})
		}, func(c *config.Config) { c.Hooks.AutoCommit = false }, NoteInfo, "auto_commit = false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.setup(t)
			h := newTestHost(t, editAndCreate, tc.tweak)
			note := hookOutcome(t, h, dir)
			if note.Kind != tc.want || !strings.Contains(note.Text, tc.text) {
				t.Fatalf("hook said %s %q, want %s %q", note.Kind, note.Text, tc.want, tc.text)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "hello, world\n" {
				t.Fatalf("greet.txt = %q", got)
			}
			if tc.want != NoteCommit {
				return
			}
			if tc.name == "no commits yet" {
				// The user's untracked greet.txt stays theirs.
				if files := headFiles(t, dir); files != "new file.txt" {
					t.Fatalf("HEAD holds %q", files)
				}
				return
			}
			if files := headFiles(t, dir); files != "greet.txt\nnew file.txt" {
				t.Fatalf("HEAD holds %q", files)
			}
			if st := runGit(t, dir, "status", "--porcelain"); st != "" {
				t.Fatalf("left uncommitted:\n%s", st)
			}
			if msg := runGit(t, dir, "log", "-1", "--format=%B"); !strings.Contains(msg, "Requested: greet the world") {
				t.Fatalf("commit message:\n%s", msg)
			}
		})
	}
}

func TestHookLeavesTheUsersOtherChangesAlone(t *testing.T) {
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n", "staged.txt": "a\n", "unstaged.txt": "b\n"})
	os.WriteFile(filepath.Join(dir, "staged.txt"), []byte("staged by the user\n"), 0o644)
	runGit(t, dir, "add", "staged.txt")
	os.WriteFile(filepath.Join(dir, "unstaged.txt"), []byte("unstaged by the user\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "untracked.txt"), []byte("mine\n"), 0o644)
	h := newTestHost(t, editAndCreate, nil)
	if note := hookOutcome(t, h, dir); note.Kind != NoteCommit {
		t.Fatalf("hook: %s %q", note.Kind, note.Text)
	}
	if files := headFiles(t, dir); files != "greet.txt\nnew file.txt" {
		t.Fatalf("HEAD holds %q", files)
	}
	want := "M  staged.txt\n M unstaged.txt\n?? untracked.txt\n"
	if st := runGit(t, dir, "status", "--porcelain"); st != want {
		t.Fatalf("status after the commit:\n%s\nwant:\n%s", st, want)
	}
	if staged := runGit(t, dir, "diff", "--cached", "staged.txt"); !strings.Contains(staged, "+staged by the user") {
		t.Fatalf("the staged change is gone:\n%s", staged)
	}
}

// The user's uncommitted line stays out of the agent's commit, in the
// worktree; undo takes the agent's hunk out and keeps the user's line.
func TestHookCommitsOnlyTheAgentsHunksOfADirtyFile(t *testing.T) {
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\nbye\n", "other.txt": "o\n"})
	initial := runGit(t, dir, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("hello\nbye\nuser's line\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "other.txt"), []byte("staged\n"), 0o644)
	runGit(t, dir, "add", "other.txt")
	h := newTestHost(t, editAndCreate, nil)
	note := hookOutcome(t, h, dir)
	if note.Kind != NoteCommit {
		t.Fatalf("hook: %s %q", note.Kind, note.Text)
	}
	if got := runGit(t, dir, "show", "HEAD:greet.txt"); got != "hello, world\nbye\n" {
		t.Fatalf("the commit holds greet.txt = %q, want the parent plus the agent's hunk only", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "hello, world\nbye\nuser's line\n" {
		t.Fatalf("worktree greet.txt = %q", got)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "M  other.txt\n M greet.txt\n" && st != " M greet.txt\nM  other.txt\n" {
		t.Fatalf("status:\n%s", st)
	}
	if d := runGit(t, dir, "diff", "greet.txt"); !strings.Contains(d, "+user's line") || strings.Contains(d, "+hello, world") || strings.Contains(d, "-hello") {
		t.Fatalf("the unstaged diff is not the user's line alone:\n%s", d)
	}
	s, _ := h.Conversation(dir)
	if _, err := s.Changes().Undo(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if now := runGit(t, dir, "rev-parse", "HEAD"); now != initial {
		t.Fatal("HEAD did not go back")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "hello\nbye\nuser's line\n" {
		t.Fatalf("after undo greet.txt = %q, want the user's version", got)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != " M greet.txt\nM  other.txt\n" {
		t.Fatalf("status after undo:\n%s", st)
	}
}

func TestHookFailingPreCommitHookIsReported(t *testing.T) {
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	os.WriteFile(hook, []byte("#!/bin/sh\necho 'lint: greet.txt is not friendly' >&2\nexit 1\n"), 0o755)
	head := runGit(t, dir, "rev-parse", "HEAD")
	var told string
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		if last := req.Messages[len(req.Messages)-1]; strings.Contains(last.Content, "post-tool hook failed") {
			told = last.Content
		}
		editAndCreate.Stream(ctx, req, emit)
	})
	// Commands are allowed: the hooks run (in the sandbox).
	h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	note := hookOutcome(t, h, dir)
	if note.Kind != NoteError || !strings.Contains(note.Text, "lint: greet.txt is not friendly") {
		t.Fatalf("hook: %s %q", note.Kind, note.Text)
	}
	if !strings.Contains(told, "lint: greet.txt is not friendly") {
		t.Fatalf("the model was told %q", told)
	}
	if now := runGit(t, dir, "rev-parse", "HEAD"); now != head {
		t.Fatal("something was committed")
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != " M greet.txt\n?? \"new file.txt\"\n" {
		t.Fatalf("the change did not stay in the worktree, unstaged:\n%s", st)
	}
}

// undoSetup makes the session commit greet.txt and "new file.txt".
func undoSetup(t *testing.T, files map[string]string) (*testHost, *Conversation, string) {
	t.Helper()
	if files == nil {
		files = map[string]string{"greet.txt": "hello\n"}
	}
	dir := gitRepo(t, files)
	h := newTestHost(t, editAndCreate, nil)
	if note := hookOutcome(t, h, dir); note.Kind != NoteCommit {
		t.Fatalf("hook: %s %q", note.Kind, note.Text)
	}
	s, _ := h.Conversation(dir)
	return h, s, dir
}

func TestUndoRestoresThePreCommitState(t *testing.T) {
	h, s, dir := undoSetup(t, map[string]string{"greet.txt": "hello\n", "other.txt": "o\n"})
	_ = h
	before := runGit(t, dir, "rev-parse", "HEAD~1")
	os.WriteFile(filepath.Join(dir, "other.txt"), []byte("user's work\n"), 0o644)
	msg, err := s.Changes().Undo(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "cherry-pick") {
		t.Fatalf("Undo said %q", msg)
	}
	if now := runGit(t, dir, "rev-parse", "HEAD"); now != before {
		t.Fatal("HEAD did not go back")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "hello\n" {
		t.Fatalf("greet.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "new file.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the created file is still there: %v", err)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != " M other.txt\n" {
		t.Fatalf("status:\n%s", st)
	}
	if _, err := s.Changes().Undo(context.Background(), ""); !errors.Is(err, ErrUndoRefused) || !strings.Contains(err.Error(), "no commit") {
		t.Fatalf("second Undo: %v", err)
	}
}

// Undo keeps the user's edits made after the commit.
func TestUndoKeepsTheUsersLaterEdits(t *testing.T) {
	_, s, dir := undoSetup(t, map[string]string{"greet.txt": "hello\nmiddle\nend\n"})
	os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("hello, world\nmiddle\nend\nmine\n"), 0o644)
	msg, err := s.Changes().Undo(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "hello\nmiddle\nend\nmine\n" {
		t.Fatalf("greet.txt = %q", got)
	}
	if !strings.Contains(msg, "your later edits are kept in greet.txt") {
		t.Fatalf("Undo said %q", msg)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != " M greet.txt\n" {
		t.Fatalf("status:\n%s", st)
	}
}

func TestUndoGuards(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after func(t *testing.T, dir string)
		want  string
	}{
		{"dirty", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("typed since\n"), 0o644)
		}, "your changes to greet.txt since the commit overlap the agent's"},
		{"staged", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("hello, world\nstaged\n"), 0o644)
			runGit(t, dir, "add", "greet.txt")
		}, "greet.txt has changes staged since the commit"},
		{"merge in progress", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, ".git", "MERGE_HEAD"), []byte(runGit(t, dir, "rev-parse", "HEAD")), 0o644)
		}, "a merge is in progress"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s, dir := undoSetup(t, nil)
			tc.after(t, dir)
			head := runGit(t, dir, "rev-parse", "HEAD")
			_, err := s.Changes().Undo(context.Background(), "")
			if !errors.Is(err, ErrUndoRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Undo: %v, want a refusal with %q", err, tc.want)
			}
			if now := runGit(t, dir, "rev-parse", "HEAD"); now != head {
				t.Fatal("a refused undo moved HEAD")
			}
		})
	}
	t.Run("not this session's", func(t *testing.T) {
		dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
		h := newTestHost(t, editAndCreate, nil)
		s, _ := h.AddFolder(dir)
		if _, err := s.Changes().Undo(context.Background(), ""); !errors.Is(err, ErrUndoRefused) {
			t.Fatalf("Undo: %v", err)
		}
	})
}

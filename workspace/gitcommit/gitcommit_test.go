package gitcommit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

var ctx = context.Background()

func message(files []string) string { return "loom: edit " + strings.Join(files, ", ") + "\n" }

// commitSteps prepares and commits one edit of each file (old -> new).
func commitSteps(t *testing.T, dir string, opts CommitOptions, edits ...string) (*Result, *Plan, error) {
	t.Helper()
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var changes []Change
	for i := 0; i+2 < len(edits)+1; i += 3 {
		changes = append(changes, Change{Path: filepath.Join(dir, edits[i]), Steps: []Step{{Old: edits[i+1], New: edits[i+2]}}})
	}
	plan, err := r.Prepare(ctx, changes, message)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Commit(ctx, plan, opts)
	return res, plan, err
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The commit holds the agent's file only; the user's staged and unstaged
// changes stay where they were, and `git status` shows no trace of the
// agent's change.
func TestCommitKeepsTheUsersIndexAndWorktree(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	write(t, dir, "b.txt", "staged\n")
	gittest.Run(t, dir, "add", "b.txt")
	write(t, dir, "c.txt", "unstaged\n")
	write(t, dir, "a.txt", "agent\n")
	res, _, err := commitSteps(t, dir, CommitOptions{RunHooks: true}, "a.txt", "a\n", "agent\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Run(t, dir, "show", "--name-only", "--format=", "HEAD"); got != "a.txt\n" {
		t.Fatalf("HEAD holds %q", got)
	}
	if st := gittest.Run(t, dir, "status", "--porcelain"); st != "M  b.txt\n M c.txt\n" {
		t.Fatalf("status:\n%s", st)
	}
	if got := gittest.Run(t, dir, "log", "-1", "--format=%s%n%gs", "-g"); got != "loom: edit a.txt\ncommit (loom): loom: edit a.txt\n" {
		t.Fatalf("log/reflog: %q", got)
	}
	if res.Parent == "" || len(res.Index.Merged)+len(res.Index.Conflicts)+len(res.Index.Locked) != 0 {
		t.Fatalf("result %+v", res)
	}
}

// The branch is moved with compare-and-swap: a commit made meanwhile to
// the same file is never overwritten; one to another file is built upon.
func TestCommitWhenTheBranchMoved(t *testing.T) {
	for _, same := range []bool{true, false} {
		t.Run(map[bool]string{true: "same file", false: "other file"}[same], func(t *testing.T) {
			dir := gittest.Repo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
			r, _ := Open(ctx, dir)
			plan, err := r.Prepare(ctx, []Change{{Path: filepath.Join(dir, "a.txt"), Steps: []Step{{Old: "a\n", New: "agent\n"}}}}, message)
			if err != nil {
				t.Fatal(err)
			}
			moved := "b.txt"
			if same {
				moved = "a.txt"
			}
			write(t, dir, moved, "user's commit\n")
			gittest.Run(t, dir, "commit", "-q", "-am", "user")
			userHead := strings.TrimSpace(gittest.Run(t, dir, "rev-parse", "HEAD"))
			// What the session does between Prepare and Commit is short,
			// but a racing commit is possible: make r see it only at
			// update-ref time (same file) or before (other file).
			if !same {
				r.Head = userHead
			}
			res, err := r.Commit(ctx, plan, CommitOptions{})
			if same {
				if !errors.Is(err, ErrMoved) {
					t.Fatalf("Commit: %v, want ErrMoved", err)
				}
				if now := strings.TrimSpace(gittest.Run(t, dir, "rev-parse", "HEAD")); now != userHead {
					t.Fatal("the user's commit was overwritten")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Parent != userHead || gittest.Run(t, dir, "show", "HEAD:b.txt") != "user's commit\n" {
				t.Fatalf("not built on the user's commit: %+v", res)
			}
		})
	}
}

// The user's hooks run as with git commit: pre-commit sees the agent's
// change staged (in the commit's index), commit-msg may edit the message,
// post-commit runs after. A failing pre-commit commits nothing. Without
// RunHooks, none runs.
func TestCommitRunsTheHooks(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	write(t, dir, "b.txt", "user's staged\n")
	gittest.Run(t, dir, "add", "b.txt")
	hooks := filepath.Join(dir, ".git", "hooks")
	log := filepath.Join(t.TempDir(), "log")
	os.WriteFile(filepath.Join(hooks, "pre-commit"), []byte("#!/bin/sh\ngit diff --cached --name-only >> '"+log+"'\n"), 0o755)
	os.WriteFile(filepath.Join(hooks, "commit-msg"), []byte("#!/bin/sh\nprintf '\\nSigned-off-by: hook\\n' >> \"$1\"\n"), 0o755)
	os.WriteFile(filepath.Join(hooks, "post-commit"), []byte("#!/bin/sh\necho post >> '"+log+"'\n"), 0o755)
	if _, _, err := commitSteps(t, dir, CommitOptions{RunHooks: true}, "a.txt", "a\n", "agent\n"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(log); string(got) != "a.txt\npost\n" {
		t.Fatalf("hooks saw %q", got)
	}
	if msg := gittest.Run(t, dir, "log", "-1", "--format=%B"); msg != "loom: edit a.txt\n\nSigned-off-by: hook\n\n" {
		t.Fatalf("message %q", msg)
	}
	os.Remove(log)
	if _, _, err := commitSteps(t, dir, CommitOptions{}, "a.txt", "agent\n", "again\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(log); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a hook ran with RunHooks off")
	}
	head := gittest.Run(t, dir, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(hooks, "pre-commit"), []byte("#!/bin/sh\necho 'lint failed' >&2\nexit 1\n"), 0o755)
	if _, _, err := commitSteps(t, dir, CommitOptions{RunHooks: true}, "a.txt", "again\n", "third\n"); err == nil || !strings.Contains(err.Error(), "lint failed") {
		t.Fatalf("Commit: %v", err)
	}
	if now := gittest.Run(t, dir, "rev-parse", "HEAD"); now != head {
		t.Fatal("a failing pre-commit hook did not stop the commit")
	}
}

// What a command wrote is committed as it is on disk: a symbolic link as
// a link (never followed), a deleted file as a deletion; an ignored file
// is left out.
func TestPrepareFromDisk(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"gone.txt": "g\n", ".gitignore": "*.log\n"})
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("outside the repository\n"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "link"))
	os.Remove(filepath.Join(dir, "gone.txt"))
	write(t, dir, "build.log", "noise\n")
	r, _ := Open(ctx, dir)
	var changes []Change
	for _, f := range []string{"link", "gone.txt", "build.log"} {
		changes = append(changes, Change{Path: filepath.Join(dir, f), FromDisk: true})
	}
	plan, err := r.Prepare(ctx, changes, message)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Skipped) != 1 || plan.Skipped[0].Path != "build.log" || plan.Skipped[0].Reason != "git ignores it" {
		t.Fatalf("skipped %+v", plan.Skipped)
	}
	if _, err := r.Commit(ctx, plan, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if ls := gittest.Run(t, dir, "ls-tree", "HEAD", "link"); !strings.HasPrefix(ls, "120000 blob") {
		t.Fatalf("link committed as %q", ls)
	}
	if got := gittest.Run(t, dir, "show", "HEAD:link"); got != outside {
		t.Fatalf("the link's blob is %q, not its target", got)
	}
	if ls := gittest.Run(t, dir, "ls-tree", "HEAD", "gone.txt"); ls != "" {
		t.Fatalf("gone.txt still in HEAD: %q", ls)
	}
	if st := gittest.Run(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status:\n%s", st)
	}
}

// A file with git's line-ending filter: the agent's CRLF text is
// committed as git would commit it (LF), through the filters.
func TestPrepareAppliesTheFilters(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "one\ntwo\n"})
	gittest.Run(t, dir, "config", "core.autocrlf", "true")
	write(t, dir, "a.txt", "one\r\nTWO\r\n")
	if _, _, err := commitSteps(t, dir, CommitOptions{}, "a.txt", "one\r\ntwo\r\n", "one\r\nTWO\r\n"); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Run(t, dir, "show", "HEAD:a.txt"); got != "one\nTWO\n" {
		t.Fatalf("HEAD:a.txt = %q", got)
	}
}

// Agent hunks that overlap the user's own changes are not committed.
func TestPrepareSkipsOverlappingHunks(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "one\ntwo\n"})
	r, _ := Open(ctx, dir)
	plan, err := r.Prepare(ctx, []Change{{Path: filepath.Join(dir, "a.txt"), Steps: []Step{{Old: "one\nuser's\n", New: "one\nagent's\n"}}}}, message)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Entries) != 0 || len(plan.Skipped) != 1 || !strings.Contains(plan.Skipped[0].Reason, "overlaps your own uncommitted changes") {
		t.Fatalf("plan %+v", plan)
	}
}

// Nothing is committed, and undo is refused, during a bisect or an am.
func TestInProgress(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "a\n"})
	r, _ := Open(ctx, dir)
	os.WriteFile(filepath.Join(dir, ".git", "BISECT_LOG"), nil, 0o644)
	if _, err := r.Prepare(ctx, nil, message); !errors.Is(err, ErrInProgress) || !strings.Contains(err.Error(), "git bisect reset") {
		t.Fatalf("Prepare: %v", err)
	}
	os.Remove(filepath.Join(dir, ".git", "BISECT_LOG"))
	os.MkdirAll(filepath.Join(dir, ".git", "rebase-apply"), 0o755)
	os.WriteFile(filepath.Join(dir, ".git", "rebase-apply", "applying"), nil, 0o644)
	if op, advice := r.InProgress(); op != "git am" || !strings.Contains(advice, "git am --abort") {
		t.Fatalf("InProgress: %q %q", op, advice)
	}
}

func TestHookFiles(t *testing.T) {
	dir := gittest.Repo(t, nil)
	gittest.Run(t, dir, "config", "core.hooksPath", "tools/hooks")
	r, _ := Open(ctx, dir)
	got := r.HookFiles([]string{"a.go", "tools/hooks/pre-commit", ".husky/pre-push", "lefthook.yml", "sub/.pre-commit-config.yaml", "tools/hooksx"})
	want := "tools/hooks/pre-commit .husky/pre-push lefthook.yml sub/.pre-commit-config.yaml"
	if strings.Join(got, " ") != want {
		t.Fatalf("HookFiles = %v", got)
	}
}

// The user's index is read in Go for versions 2 to 4, and through git
// for a split index; each way, the staged change stays staged and the
// agent's entry follows the commit.
func TestCommitWithEachIndexFormat(t *testing.T) {
	for _, cfg := range [][]string{nil, {"index.version", "3"}, {"index.version", "4"}, {"core.splitIndex", "true"}} {
		t.Run(strings.Join(cfg, "="), func(t *testing.T) {
			dir := gittest.Repo(t, map[string]string{"a.txt": "a\n", "dir/b.txt": "b\n", "dir/sub/c.txt": "c\n"})
			if cfg != nil {
				gittest.Run(t, dir, "config", cfg[0], cfg[1])
			}
			if cfg != nil && cfg[0] == "index.version" {
				gittest.Run(t, dir, "update-index", "--index-version", cfg[1])
			} else {
				gittest.Run(t, dir, "update-index", "--really-refresh")
			}
			write(t, dir, "dir/b.txt", "staged\n")
			gittest.Run(t, dir, "add", "dir/b.txt")
			if raw, _ := os.ReadFile(filepath.Join(dir, ".git", "index")); cfg != nil && cfg[1] == "4" && raw[7] != 4 {
				t.Fatalf("the index is version %d", raw[7])
			}
			write(t, dir, "dir/sub/c.txt", "agent\n")
			if _, _, err := commitSteps(t, dir, CommitOptions{}, "dir/sub/c.txt", "c\n", "agent\n"); err != nil {
				t.Fatal(err)
			}
			if st := gittest.Run(t, dir, "status", "--porcelain"); st != "M  dir/b.txt\n" {
				t.Fatalf("status:\n%s", st)
			}
			got, err := readIndex(filepath.Join(dir, ".git", "index"), nil, 40)
			if cfg != nil && cfg[0] == "core.splitIndex" {
				if !errors.Is(err, errIndexFormat) {
					t.Fatalf("a split index was read in Go: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Fields(gittest.Run(t, dir, "ls-files", "-s", "dir/sub/c.txt"))
			if e := got["dir/sub/c.txt"]; len(got) != 3 || e.mode != want[0] || e.oid != want[1] {
				t.Fatalf("readIndex: %v, git: %v", got, want)
			}
		})
	}
}

// The message hooks get a private temporary file as $1, never
// .git/COMMIT_EDITMSG: a `git commit` the user has open keeps its message.
func TestCommitMessageHooksUseAPrivateFile(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "a\n"})
	editmsg := filepath.Join(dir, ".git", "COMMIT_EDITMSG")
	write(t, dir, ".git/COMMIT_EDITMSG", "the user's half-written message\n")
	log := filepath.Join(t.TempDir(), "log")
	hooks := filepath.Join(dir, ".git", "hooks")
	for _, h := range []string{"prepare-commit-msg", "commit-msg"} {
		os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\necho \"$1\" >> '"+log+"'\nprintf 'by "+h+"\\n' >> \"$1\"\n"), 0o755)
	}
	if _, _, err := commitSteps(t, dir, CommitOptions{RunHooks: true}, "a.txt", "a\n", "agent\n"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(editmsg); string(got) != "the user's half-written message\n" {
		t.Fatalf("COMMIT_EDITMSG is now %q", got)
	}
	b, _ := os.ReadFile(log)
	paths := strings.Fields(string(b))
	if len(paths) != 2 || paths[0] != paths[1] || strings.HasPrefix(paths[0], dir) {
		t.Fatalf("the hooks got %q", paths)
	}
	if _, err := os.Stat(paths[0]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the message file was left behind: %v", err)
	}
	if msg := gittest.Run(t, dir, "log", "-1", "--format=%B"); !strings.Contains(msg, "by prepare-commit-msg\nby commit-msg") {
		t.Fatalf("message %q", msg)
	}
}

// Revert of several agent commits, in any order, with a user's commit
// between them: one revert commit takes the agents' hunks back and keeps
// the user's commit and the user's uncommitted edit.
func TestRevertSeveralCommits(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": tenLines("1", "5", "7", "10")})
	write(t, dir, "a.txt", tenLines("ONE", "5", "7", "10"))
	a, _, err := commitSteps(t, dir, CommitOptions{}, "a.txt", tenLines("1", "5", "7", "10"), tenLines("ONE", "5", "7", "10"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", tenLines("ONE", "user", "7", "10"))
	gittest.Run(t, dir, "commit", "-qam", "user")
	write(t, dir, "a.txt", tenLines("ONE", "user", "7", "TEN"))
	c, _, err := commitSteps(t, dir, CommitOptions{}, "a.txt", tenLines("ONE", "user", "7", "10"), tenLines("ONE", "user", "7", "TEN"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", tenLines("ONE", "user", "mine", "TEN"))
	r, _ := Open(ctx, dir)
	rv, err := revertApplied(ctx, r, []*Result{a, c}, RevertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rv.Dropped || len(rv.Reverted) != 2 || rv.Reverted[0] != c.SHA {
		t.Fatalf("reverted %+v", rv)
	}
	if got := gittest.Run(t, dir, "show", "HEAD:a.txt"); got != tenLines("1", "user", "7", "10") {
		t.Fatalf("HEAD's a.txt = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != tenLines("1", "user", "mine", "10") {
		t.Fatalf("a.txt = %q", got)
	}
	if st := gittest.Run(t, dir, "status", "--porcelain"); st != " M a.txt\n" {
		t.Fatalf("status:\n%s", st)
	}
	// Both newest and consecutive: the branch moves back.
	dir = gittest.Repo(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, "a.txt", "b\n")
	x, _, _ := commitSteps(t, dir, CommitOptions{}, "a.txt", "a\n", "b\n")
	write(t, dir, "a.txt", "c\n")
	y, _, _ := commitSteps(t, dir, CommitOptions{}, "a.txt", "b\n", "c\n")
	r, _ = Open(ctx, dir)
	if rv, err = revertApplied(ctx, r, []*Result{x, y}, RevertOptions{}); err != nil || !rv.Dropped || rv.Head != x.Parent {
		t.Fatalf("Revert: %+v %v", rv, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "a\n" {
		t.Fatalf("a.txt = %q", got)
	}
}

// tenLines makes a ten-line text with lines 1, 5, 7 and 10 given, the others
// their numbers.
func tenLines(one, five, seven, ten string) string {
	lines := []string{one, "2", "3", "4", five, "6", seven, "8", "9", ten}
	return strings.Join(lines, "\n") + "\n"
}

// The user staged a change (git add -p) of a file the agent then edits
// elsewhere: the agent's hunk is merged into the staged version, so that
// the user's own next `git commit` keeps both; an overlapping staged
// change is left and reported.
func TestCommitMergesTheAgentsHunkIntoTheStagedVersion(t *testing.T) {
	base := tenLines("1", "5", "7", "10")
	dir := gittest.Repo(t, map[string]string{"a.txt": base, "b.txt": base})
	write(t, dir, "a.txt", tenLines("ONE", "5", "7", "10"))
	write(t, dir, "b.txt", tenLines("1", "5", "USER", "10"))
	gittest.Run(t, dir, "add", "a.txt", "b.txt")
	// The agent's edits, from HEAD's texts: a's line 10, b's line 7.
	write(t, dir, "a.txt", tenLines("ONE", "5", "7", "TEN"))
	write(t, dir, "b.txt", tenLines("1", "5", "AGENT", "10"))
	res, _, err := commitSteps(t, dir, CommitOptions{}, "a.txt", base, tenLines("1", "5", "7", "TEN"), "b.txt", base, tenLines("1", "5", "AGENT", "10"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Index.Merged, []string{"a.txt"}) || !slices.Equal(res.Index.Conflicts, []string{"b.txt"}) {
		t.Fatalf("index report %+v", res.Index)
	}
	if got := gittest.Run(t, dir, "show", ":a.txt"); got != tenLines("ONE", "5", "7", "TEN") {
		t.Fatalf("staged a.txt = %q", got)
	}
	gittest.Run(t, dir, "commit", "-q", "-m", "the user's commit", "--", "a.txt")
	if got := gittest.Run(t, dir, "show", "HEAD:a.txt"); got != tenLines("ONE", "5", "7", "TEN") {
		t.Fatalf("the user's commit reverted the agent's hunk: %q", got)
	}
}

// A held index.lock: the commit is made and reported, the entries are
// left for a retry, which moves them once the lock is gone.
func TestCommitWithTheIndexLocked(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "a\n"})
	lock := filepath.Join(dir, ".git", "index.lock")
	write(t, dir, ".git/index.lock", "")
	write(t, dir, "a.txt", "agent\n")
	res, _, err := commitSteps(t, dir, CommitOptions{}, "a.txt", "a\n", "agent\n")
	if err != nil || res == nil {
		t.Fatalf("Commit: %v", err)
	}
	if len(res.Index.Locked) != 1 || gittest.Run(t, dir, "show", "HEAD:a.txt") != "agent\n" {
		t.Fatalf("index report %+v", res.Index)
	}
	os.Remove(lock)
	if st := gittest.Run(t, dir, "status", "--porcelain"); st != "MM a.txt\n" {
		t.Fatalf("status before the retry:\n%s", st)
	}
	r, _ := Open(ctx, dir)
	if rep := r.SyncIndex(ctx, res.Index.Locked, 0); len(rep.Locked)+len(rep.Conflicts) != 0 {
		t.Fatalf("retry %+v", rep)
	}
	if st := gittest.Run(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status after the retry:\n%s", st)
	}
}

// revertApplied reverts commits and applies the planned restores through
// the worktree's writer, as the workspace does.
func revertApplied(ctx context.Context, r *Repo, commits []*Result, opts RevertOptions) (*Reverted, error) {
	rv, err := Revert(ctx, r, commits, opts)
	if err != nil {
		return rv, err
	}
	w := worktree.New(r.Top)
	for _, c := range rv.Restores {
		if err := w.Write(c); err != nil {
			return rv, err
		}
	}
	return rv, nil
}

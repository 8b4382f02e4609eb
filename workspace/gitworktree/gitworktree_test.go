package gitworktree

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// repo is a repository with a.txt (ten lines), .env and build/ ignored
// and untracked, and a .worktreeinclude naming .env.
func repo(t *testing.T) string {
	t.Helper()
	var lines []string
	for i := 1; i <= 10; i++ {
		lines = append(lines, "line "+string(rune('0'+i%10)))
	}
	dir := gittest.Repo(t, map[string]string{"a.txt": strings.Join(lines, "\n") + "\n",
		".gitignore": ".env\nbuild/\n", ".worktreeinclude": ".env\n"})
	write(t, filepath.Join(dir, ".env"), "SECRET=1\n")
	write(t, filepath.Join(dir, "build", "out.bin"), strings.Repeat("x", 4096))
	return dir
}

func TestCreateListRemove(t *testing.T) {
	ctx := context.Background()
	dir := repo(t)
	m := &Manager{Dir: filepath.Join(t.TempDir(), "state", "worktrees")}
	wt, err := m.Create(ctx, dir, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(wt.Path, dir) || !strings.HasPrefix(wt.Path, m.Dir) {
		t.Fatalf("worktree %s is not under %s, outside %s", wt.Path, m.Dir, dir)
	}
	if got := read(t, filepath.Join(wt.Path, "a.txt")); !strings.HasPrefix(got, "line 1\n") {
		t.Fatalf("a.txt in the worktree: %q", got)
	}
	if got := read(t, filepath.Join(wt.Path, ".env")); got != "SECRET=1\n" || !slices.Equal(wt.Included, []string{".env"}) {
		t.Fatalf(".env in the worktree: %q, included %v", got, wt.Included)
	}
	if _, err := os.Stat(filepath.Join(wt.Path, "build")); err == nil {
		t.Fatal("build/ was copied though .worktreeinclude does not name it")
	}
	if out := gittest.Run(t, dir, "worktree", "list"); !strings.Contains(out, wt.Path) {
		t.Fatalf("git worktree list does not show %s:\n%s", wt.Path, out)
	}
	all, err := m.List(ctx)
	if err != nil || len(all) != 1 {
		t.Fatalf("List: %v %+v", err, all)
	}
	i := all[0]
	if !i.OwnerAlive || i.State != StateActive || i.Conversation != "c1" || i.Folder != mustEval(t, dir) || i.Size == 0 || i.Unmerged() {
		t.Fatalf("List: %+v", i)
	}
	write(t, filepath.Join(wt.Path, "new.txt"), "new\n")
	write(t, filepath.Join(wt.Path, "a.txt"), "changed\n")
	all, _ = m.List(ctx)
	if !slices.Equal(all[0].Changed, []string{"a.txt", "new.txt"}) {
		t.Fatalf("changed: %v (%v)", all[0].Changed, all[0].Err)
	}
	if err := m.Remove(ctx, wt.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(wt.Path); err == nil {
		t.Fatal("the worktree's directory is left")
	}
	if out := gittest.Run(t, dir, "worktree", "list"); strings.Contains(out, wt.Path) {
		t.Fatalf("git still lists %s:\n%s", wt.Path, out)
	}
	if all, _ := m.List(ctx); len(all) != 0 {
		t.Fatalf("listed after removal: %+v", all)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMergeBackKeepsUserEdits: the worktree changes line 1 and adds a
// file; meanwhile the user changes line 9 and, in b.txt, the line the
// worktree changes too. The merge keeps both of a.txt's edits, creates
// the new file, leaves b.txt's overlapping hunk out (the user's line
// stays) and keeps the worktree.
func TestMergeBackKeepsUserEdits(t *testing.T) {
	ctx := context.Background()
	dir := repo(t)
	write(t, filepath.Join(dir, "b.txt"), "one\ntwo\n")
	gittest.Run(t, dir, "add", "b.txt")
	gittest.Run(t, dir, "commit", "-q", "-m", "b")
	m := &Manager{Dir: filepath.Join(t.TempDir(), "worktrees")}
	wt, err := m.Create(ctx, dir, "c1")
	if err != nil {
		t.Fatal(err)
	}
	orig := read(t, filepath.Join(dir, "a.txt"))
	write(t, filepath.Join(wt.Path, "a.txt"), strings.Replace(orig, "line 1\n", "line 1 by the agent\n", 1))
	write(t, filepath.Join(wt.Path, "pkg", "new.go"), "package pkg\n")
	write(t, filepath.Join(wt.Path, "b.txt"), "one\nTWO by the agent\n")
	// The user, meanwhile.
	write(t, filepath.Join(dir, "a.txt"), strings.Replace(orig, "line 9\n", "line 9 by the user\n", 1))
	write(t, filepath.Join(dir, "b.txt"), "one\ntwo by the user\n")

	dry, err := m.MergeBack(ctx, wt.Name, worktree.New(mustEval(t, dir)), false)
	if err != nil {
		t.Fatal(err)
	}
	if files, added, removed := dry.Stat(); files != 3 || added != 3 || removed != 2 {
		t.Fatalf("stat %d files +%d -%d: %+v", files, added, removed, dry.Files)
	}
	if read(t, filepath.Join(dir, "b.txt")) != "one\ntwo by the user\n" {
		t.Fatal("a dry run wrote")
	}
	res, err := m.MergeBack(ctx, wt.Name, worktree.New(mustEval(t, dir)), true)
	if err != nil {
		t.Fatal(err)
	}
	a := read(t, filepath.Join(dir, "a.txt"))
	if !strings.Contains(a, "line 1 by the agent\n") || !strings.Contains(a, "line 9 by the user\n") {
		t.Fatalf("a.txt lost an edit:\n%s", a)
	}
	if read(t, filepath.Join(dir, "pkg", "new.go")) != "package pkg\n" {
		t.Fatal("new.go not created")
	}
	if got := read(t, filepath.Join(dir, "b.txt")); got != "one\ntwo by the user\n" {
		t.Fatalf("b.txt: the user's line was overwritten: %q", got)
	}
	var conflicts []string
	for _, f := range res.Files {
		if f.Conflict != "" {
			conflicts = append(conflicts, f.Path)
		}
	}
	if !slices.Equal(conflicts, []string{"b.txt"}) {
		t.Fatalf("conflicts %v: %+v", conflicts, res.Files)
	}
	if mf, _ := m.load(wt.Name); mf.State != StateKept {
		t.Fatalf("state %s after a merge with conflicts, want kept", mf.State)
	}
}

// TestRecoverAfterKill: a process makes two worktrees, changes a file
// in one and is killed (SIGKILL). Recover removes the clean orphan,
// keeps the one with work (state kept, named), and leaves no worktree
// unaccounted for; a live owner's worktree is left alone.
func TestRecoverAfterKill(t *testing.T) {
	ctx := context.Background()
	dir := repo(t)
	m := &Manager{Dir: filepath.Join(t.TempDir(), "worktrees")}
	live, err := m.Create(ctx, dir, "mine")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperOwner$")
	cmd.Env = append(os.Environ(), "GITWORKTREE_HELPER="+dir+"\n"+m.Dir)
	stdout, _ := cmd.StdoutPipe()
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if s, ok := strings.CutPrefix(sc.Text(), "WT "); ok {
				lines <- s
			}
		}
		close(lines)
	}()
	var names []string
	for len(names) < 2 {
		select {
		case s, ok := <-lines:
			if !ok {
				t.Fatalf("the helper ended early, with %v", names)
			}
			names = append(names, s)
		case <-time.After(60 * time.Second):
			t.Fatal("no worktrees from the helper in 60 s")
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	clean, dirty := names[0], names[1]
	got, err := m.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("recovered %+v, want the helper's two", got)
	}
	for _, r := range got {
		switch r.Name {
		case clean:
			if !r.Removed || exists(r.Path) {
				t.Fatalf("the clean orphan was not removed: %+v", r)
			}
		case dirty:
			if r.Removed || r.State != StateKept || !slices.Equal(r.Changed, []string{"a.txt"}) || !exists(r.Path) {
				t.Fatalf("the orphan with work: %+v", r)
			}
		default:
			t.Fatalf("recovered %s, not the helper's", r.Name)
		}
	}
	all, _ := m.List(ctx)
	var left []string
	for _, i := range all {
		left = append(left, i.Name+":"+i.State)
	}
	if want := []string{live.Name + ":" + StateActive, dirty + ":" + StateKept}; !sameSet(left, want) {
		t.Fatalf("left %v, want %v", left, want)
	}
	if out := gittest.Run(t, dir, "worktree", "list"); strings.Contains(out, clean) {
		t.Fatalf("git still lists the removed orphan:\n%s", out)
	}
	// Clean leaves the kept one with work and the live one.
	if removed, err := m.Clean(ctx); err != nil || len(removed) != 0 {
		t.Fatalf("Clean removed %+v (%v)", removed, err)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestHelperOwner is the process TestRecoverAfterKill kills: it makes
// two worktrees, changes a.txt in the second, prints their names and
// waits to be killed.
func TestHelperOwner(t *testing.T) {
	env := os.Getenv("GITWORKTREE_HELPER")
	if env == "" {
		t.Skip("run by TestRecoverAfterKill")
	}
	dir, state, _ := strings.Cut(env, "\n")
	m := &Manager{Dir: state}
	ctx := context.Background()
	a, err := m.Create(ctx, dir, "h1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Create(ctx, dir, "h2")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(b.Path, "a.txt"), "changed\n")
	os.Stdout.WriteString("WT " + a.Name + "\nWT " + b.Name + "\n")
	bufio.NewReader(os.Stdin).ReadString('\n') // until killed
}

// TestIncludeFollowsNoLink: .worktreeinclude copies regular files only:
// a symbolic link it matches (to a file outside the repository), or a
// file reached through a linked directory, is not copied.
func TestIncludeFollowsNoLink(t *testing.T) {
	ctx := context.Background()
	dir := repo(t)
	outside := filepath.Join(t.TempDir(), "secret")
	write(t, filepath.Join(outside, "key"), "PRIVATE\n")
	write(t, filepath.Join(dir, ".worktreeinclude"), ".env\nkey.txt\nlinked/\n")
	if err := os.Symlink(filepath.Join(outside, "key"), filepath.Join(dir, "key.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, dir, "add", ".worktreeinclude")
	gittest.Run(t, dir, "commit", "-q", "-m", "include")
	m := &Manager{Dir: filepath.Join(t.TempDir(), "worktrees")}
	wt, err := m.Create(ctx, dir, "c")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(wt.Included, []string{".env"}) {
		t.Fatalf("included %v, want only .env", wt.Included)
	}
	for _, p := range []string{"key.txt", "linked", "linked/key"} {
		if _, err := os.Lstat(filepath.Join(wt.Path, p)); err == nil {
			t.Errorf("%s was copied", p)
		}
	}
}

package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// BenchmarkCommandOverhead measures what the session adds to each bash
// command to tell which files it changed, in repositories of 1,000,
// 50,000 and 500,000 tracked files (1,000 files a directory), in one
// run: "after" is the watcher's window (open, the command, the fence,
// the editor check, the note for the model and the hook's report of the
// command's three files); "before" is what the hook did until now, a
// `git status --untracked-files=all` scan before and after the command
// with a hash of each dirty file (scanBefore, the old method, kept here
// only to measure it). Each overhead is the time less the command's own,
// timed alone in the same iteration (the median over the iterations). It
// reports each in ms and the ratio of
// the 500,000-file overhead to the 1,000-file one (goal: ≤ 1.2).
//
// The repositories take minutes to build; set LOOM_BENCH_REPOS to a
// directory to keep them between runs, and LOOM_BENCH_SIZES (e.g.
// "1000,50000") to run fewer sizes.
func BenchmarkCommandOverhead(b *testing.B) {
	sizes := []int{1000, 50000, 500000}
	if env := os.Getenv("LOOM_BENCH_SIZES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			var n int
			fmt.Sscan(f, &n)
			sizes = append(sizes, n)
		}
	}
	after := map[int]time.Duration{}
	before := map[int]time.Duration{}
	for _, n := range sizes {
		dir := benchRepo(b, n)
		a, bf := measureCommand(b, dir)
		after[n], before[n] = a, bf
		b.ReportMetric(float64(a.Microseconds())/1000, fmt.Sprintf("ms-after-%dk", n/1000))
		b.ReportMetric(float64(bf.Microseconds())/1000, fmt.Sprintf("ms-before-%dk", n/1000))
		b.Logf("%d files: overhead per command %v after (watcher window), %v before (two git status scans)", n, a, bf)
	}
	small, large := sizes[0], sizes[len(sizes)-1]
	if len(sizes) > 1 && after[small] > 0 && before[small] > 0 {
		b.ReportMetric(float64(after[large])/float64(after[small]), fmt.Sprintf("ratio-after-%dk/%dk", large/1000, small/1000))
		b.ReportMetric(float64(before[large])/float64(before[small]), fmt.Sprintf("ratio-before-%dk/%dk", large/1000, small/1000))
	}
}

// measureCommand runs a three-file command b.N times in dir through a
// real session (its watcher running) and returns the mean overheads of
// the window method and of the old scans.
func measureCommand(b *testing.B, dir string) (after, before time.Duration) {
	cfg := config.Default()
	cfg.Model.Name = "bench"
	h := NewHost(HostOptions{
		Editor:   newRecordingEditor(),
		Config:   func(string, []config.Override) (config.Config, error) { return cfg, nil },
		Provider: func(config.Config, func(string) string) (llm.Provider, error) { return textModel(), nil },
		StateDir: b.TempDir(),
	})
	defer h.Close()
	s, err := h.AddFolder(dir)
	if err != nil {
		b.Fatal(err)
	}
	<-s.folder.watchReady
	repo, err := gitcommit.Open(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	command := func(i int) time.Duration {
		start := time.Now()
		cmd := exec.Command("sh", "-c", fmt.Sprintf("echo %d > d0000/f0000001.txt; echo %d > d0000/f0000002.txt; echo %d > made.txt", i, i, i))
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		return time.Since(start)
	}
	// The files go back to HEAD's text by hand: `git checkout` would
	// rewrite the whole index (50 MB at 500,000 files) each time, and its
	// write-back would weigh on what follows.
	reset := func() {
		os.WriteFile(filepath.Join(dir, "d0000", "f0000001.txt"), []byte("file 1\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "d0000", "f0000002.txt"), []byte("file 2\n"), 0o644)
		os.Remove(filepath.Join(dir, "made.txt"))
	}
	// Each iteration times the command alone and with the window, and
	// keeps the difference; the median resists the shared machine's
	// scheduling spikes.
	var windowed, scans []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		reset()
		alone := command(i)
		reset()
		start := time.Now()
		before := s.folder.cmds.preImages(func() []string { return s.folder.commands().dirty(ctx, nil) })
		mark, win := s.folder.host.overlay.EditorMark(), s.folder.cmds.openWindow()
		command(i)
		run := s.folder.commands().close(win, mark, "bench", before)
		note := s.folder.commands().resultNote(ctx, run)
		changes, _ := reportCommands(ctx, repo, hookJob{Job: changes.Job{Cfg: cfg}, cmds: []commandRun{*run}}, 1)
		windowed = append(windowed, time.Since(start)-alone)
		if len(changes) != 3 || !strings.Contains(note, "made.txt") {
			b.Fatalf("the window saw %v (%q)", rels(changes), note)
		}
	}
	// The old scans take seconds at 500,000 files: three runs at most.
	for i := 0; i < min(b.N, 3); i++ {
		reset()
		alone := command(i)
		reset()
		start := time.Now()
		snap := scanBefore(ctx, dir)
		command(i)
		changed := scanBefore(ctx, dir).changedSince(snap)
		scans = append(scans, time.Since(start)-alone)
		if len(changed) != 3 {
			b.Fatalf("the scans saw %v", changed)
		}
	}
	b.StopTimer()
	reset()
	return median(windowed), median(scans)
}

// median returns the middle of ds.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// benchRepo returns a git repository of n tracked files, 1,000 a
// directory, built once (kept under LOOM_BENCH_REPOS when set).
func benchRepo(b *testing.B, n int) string {
	root := os.Getenv("LOOM_BENCH_REPOS")
	if root == "" {
		root = b.TempDir()
	}
	dir := filepath.Join(root, fmt.Sprintf("repo-%d", n))
	if _, err := os.Stat(filepath.Join(dir, ".git", "loom-bench-ready")); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	for i := 0; i < n; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("d%04d", i/1000))
		if i%1000 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%07d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"config", "user.name", "Bench"}, {"config", "user.email", "bench@example.com"},
		{"config", "gc.auto", "0"}, {"add", "-A"}, {"commit", "-q", "-m", "initial"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, ".git", "loom-bench-ready"), nil, 0o644)
	return dir
}

// scanBefore is the method the hook used until now, kept to measure it:
// `git status --porcelain=v2 -z --untracked-files=all` of the whole
// worktree, with a hash of each dirty file's content.
func scanBefore(ctx context.Context, dir string) scanned {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all").Output()
	if err != nil {
		return nil
	}
	snap := scanned{}
	for _, rec := range gitcommit.NulFields(string(out)) {
		var path string
		switch rec[0] {
		case '1':
			if f := strings.SplitN(rec, " ", 9); len(f) == 9 {
				path = f[8]
			}
		case '?':
			path = strings.TrimPrefix(rec, "? ")
		}
		if path != "" {
			b, _ := os.ReadFile(filepath.Join(dir, path))
			sum := sha256.Sum256(b)
			snap[path] = hex.EncodeToString(sum[:12])
		}
	}
	return snap
}

// scanned maps dirty paths to their content's hash.
type scanned map[string]string

// changedSince lists the paths dirty now and clean in before.
func (after scanned) changedSince(before scanned) []string {
	var out []string
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

package workspace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// BenchmarkHookVsGitCommit times the post-tool hook committing one edited
// file in a repository of 10,000 tracked files, against a bare
// `git commit -- file` of the same kind of change in the same run. It
// reports both and their ratio.
func BenchmarkHookVsGitCommit(b *testing.B) {
	dir := b.TempDir()
	gitB := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitB("init", "-q", "-b", "main")
	gitB("config", "user.name", "Bench")
	gitB("config", "user.email", "bench@example.com")
	gitB("config", "gc.auto", "0")
	for i := 0; i < 10000; i++ {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%05d.txt", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644)
	}
	gitB("add", "-A")
	gitB("commit", "-q", "-m", "initial")
	cfg := config.Default()
	cfg.Model.Name = "bench"
	// A real session (its goroutine journals the commit's start and end).
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
	hookFile := filepath.Join(dir, "d01", "f00001.txt")
	gitFile := filepath.Join(dir, "d02", "f00002.txt")
	var hookTime, gitTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before, _ := os.ReadFile(hookFile)
		after := fmt.Sprintf("hook %d\n", i)
		os.WriteFile(hookFile, []byte(after), 0o644)
		job := changes.Job{Batch: map[string]*changes.BatchFile{hookFile: {Steps: []gitcommit.Step{{Old: string(before), New: after}}}}, Prompt: "bench", Cfg: cfg}
		start := time.Now()
		res := s.verbs.commitBatch(context.Background(), job, func(*gitcommit.Repo) ([]CommandChange, []string) { return nil, nil })
		hookTime += time.Since(start)
		if res.Commit == nil {
			b.Fatalf("hook: %s", res.Action)
		}
		os.WriteFile(gitFile, []byte(fmt.Sprintf("git %d\n", i)), 0o644)
		start = time.Now()
		gitB("commit", "-q", "-m", "bare", "--", "d02/f00002.txt")
		gitTime += time.Since(start)
	}
	b.StopTimer()
	b.ReportMetric(float64(hookTime.Microseconds())/float64(b.N)/1000, "hook-ms/op")
	b.ReportMetric(float64(gitTime.Microseconds())/float64(b.N)/1000, "git-commit-ms/op")
	b.ReportMetric(float64(hookTime)/float64(gitTime), "ratio")
}

// BenchmarkWatcherStartup sets up the watcher on a git repository of 5,000
// directories and 50,000 files, and reports the heap it keeps.
func BenchmarkWatcherStartup(b *testing.B) {
	dir := b.TempDir()
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = dir
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
	for d := 0; d < 5000; d++ {
		sub := filepath.Join(dir, fmt.Sprintf("a%02d", d/100), fmt.Sprintf("b%03d", d))
		if d%100 == 0 {
			sub = filepath.Join(dir, fmt.Sprintf("a%02d", d/100))
		}
		os.MkdirAll(sub, 0o755)
		for f := 0; f < 10; f++ {
			os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d.txt", f)), nil, 0o644)
		}
	}
	var heap uint64
	var watches int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		w, err := newWatcher(watchOptions{root: dir})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		heap += m1.HeapAlloc - m0.HeapAlloc
		watches = len(w.watched)
		b.StopTimer()
		w.fsw.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(heap)/float64(b.N)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(watches), "watches")
}

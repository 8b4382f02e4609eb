package gitcommit

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
)

// BenchmarkCommitPinnedConfig is the cost of the pinned configuration
// (package gitcmd: some twenty GIT_CONFIG_* pairs in every git process's
// environment) on one auto-commit of one file (Open, Prepare, Commit:
// about ten git processes), against the same commit with git's own
// configuration; commits alternate, and the ratio is reported as
// pinned/unpinned.
func BenchmarkCommitPinnedConfig(b *testing.B) {
	dir := gittest.Repo(b, map[string]string{"a.txt": "0\n"})
	text := "0\n"
	commit := func(pinned bool) time.Duration {
		pinConfig = pinned
		defer func() { pinConfig = true }()
		start := time.Now()
		r, err := Open(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		next := strconv.Itoa(len(text)) + "\n" + text
		plan, err := r.Prepare(ctx, []Change{{Path: filepath.Join(dir, "a.txt"), Steps: []Step{{Old: text, New: next}}}}, message)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Commit(ctx, plan, CommitOptions{RunHooks: true}); err != nil {
			b.Fatal(err)
		}
		text = next
		return time.Since(start)
	}
	var pinned, plain time.Duration
	n := 0
	for b.Loop() {
		plain += commit(false)
		pinned += commit(true)
		n++
	}
	b.ReportMetric(float64(plain.Nanoseconds())/float64(n), "ns/commit-unpinned")
	b.ReportMetric(float64(pinned.Nanoseconds())/float64(n), "ns/commit-pinned")
	b.ReportMetric(float64(pinned)/float64(plain), "pinned/unpinned")
}

package workspace

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
)

// BenchmarkHookCost measures, in one run, what a no-op PreToolUse hook
// (`true`, the user's own, in the commands' sandbox) adds to a turn with
// one tool call, against the same turn with no hooks: wall time per turn
// of each, and their ratio. The no-hooks path costs one atomic load per
// hook point.
func BenchmarkHookCost(b *testing.B) {
	srv := turnModel(b)
	session := func(home string) (*Conversation, *turnEditor) {
		folder := benchFolder(b, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
		ed := &turnEditor{ended: make(chan uint64, 1)}
		opts := benchHostOptions(ed, srv.URL, func(cfg *config.Config) {
			if os.Getenv("LOOM_BENCH_NOSANDBOX") != "" {
				cfg.Tools.Sandbox = config.SandboxOff
			}
		})
		opts.Getenv = func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		}
		opts.StateDir, opts.TrustFile = b.TempDir(), filepath.Join(b.TempDir(), "trusted-folders")
		h := NewHost(opts)
		b.Cleanup(h.Close)
		s, err := h.AddFolder(folder)
		if err != nil {
			b.Fatal(err)
		}
		return s, ed
	}
	home := b.TempDir()
	settings := `{"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "true"}]}]}}`
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		b.Fatal(err)
	}
	none, noneEd := session(b.TempDir())
	hooked, hookedEd := session(home)
	turn := func(s *Conversation, ed *turnEditor) time.Duration {
		_, d := askAndWait(b, s, ed.ended, "Look at main.go and tell me what it does.")
		return d
	}
	turn(none, noneEd) // warm both up
	turn(hooked, hookedEd)
	var tNone, tHook time.Duration
	turns := 0
	for b.Loop() {
		tNone += turn(none, noneEd)
		tHook += turn(hooked, hookedEd)
		turns++
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(turns) }
	b.ReportMetric(ms(tNone), "no-hook-ms/turn")
	b.ReportMetric(ms(tHook), "noop-hook-ms/turn")
	b.ReportMetric(ms(tHook-tNone), "hook-added-ms")
	b.ReportMetric(float64(tHook)/float64(tNone), "hook/none")
}

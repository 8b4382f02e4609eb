package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/llm"
)

// BenchmarkHookCost measures, in one run, what a no-op PreToolUse hook
// (`true`, the user's own, in the commands' sandbox) adds to a turn with
// one tool call, against the same turn with no hooks: wall time per turn
// of each, and their ratio. The no-hooks path costs one atomic load per
// hook point.
func BenchmarkHookCost(b *testing.B) {
	srv := turnModel(b)
	session := func(home string) (*Conversation, *turnEditor) {
		folder, _ := filepath.EvalSymlinks(b.TempDir())
		if err := os.WriteFile(filepath.Join(folder, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		ed := &turnEditor{ended: make(chan uint64, 1)}
		h := NewHost(HostOptions{
			Editor: ed,
			Config: func(string, []config.Override) (config.Config, error) {
				cfg := config.Default()
				cfg.Model.Name = "bench"
				cfg.Hooks.AutoCommit = false
				if os.Getenv("LOOM_BENCH_NOSANDBOX") != "" {
					cfg.Tools.Sandbox = config.SandboxOff
				}
				return cfg, nil
			},
			Provider: func(config.Config, func(string) string) (llm.Provider, error) {
				return llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "bench"})
			},
			Getenv: func(k string) string {
				if k == "HOME" {
					return home
				}
				return ""
			},
			StateDir:  b.TempDir(),
			TrustFile: filepath.Join(b.TempDir(), "trusted-folders"),
		})
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
	ctx := context.Background()
	turn := func(s *Conversation, ed *turnEditor) time.Duration {
		start := time.Now()
		n, err := s.Ask(ctx, "Look at main.go and tell me what it does.")
		if err != nil {
			b.Fatal(err)
		}
		select {
		case got := <-ed.ended:
			if got != n {
				b.Fatalf("turn %d ended, want %d", got, n)
			}
		case <-time.After(time.Minute):
			b.Fatalf("turn %d did not end", n)
		}
		return time.Since(start)
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

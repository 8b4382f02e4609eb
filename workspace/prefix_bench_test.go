package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// The prefix stability of the prompt (issue 32): servers cache a prompt
// by its prefix (vLLM's prefix cache, llama.cpp's cache_prompt, OpenAI's
// and DeepSeek's automatic caching), so what a request costs the server
// to prefill is what is not a prefix of the previous request. This file
// replays a measured kind of session — 8 turns, each reading a file of a
// few KB, grepping, and answering — through a real conversation and a
// real HTTP server, and measures on the request bodies:
//
//   - fresh: the share of all prompt bytes that are not a prefix of the
//     previous request (tools first, then the messages, as the servers'
//     chat templates lay them out);
//   - sent: the prompt bytes per turn (what a server without a cache
//     prefills, and what an API bills before its cache discount).

// prefixSession runs the 8-turn session with agent.elide_after_turns =
// keep (config.Default()'s 3 is the default) and returns each request's
// prompt, as the server reads it: one element per tool list and message.
func prefixSession(tb testing.TB, keep int) [][][]byte {
	tb.Helper()
	folder, _ := filepath.EvalSymlinks(tb.TempDir())
	for i := 1; i <= 8; i++ {
		var src strings.Builder
		fmt.Fprintf(&src, "package p%d\n\n", i)
		for f := 0; src.Len() < 3000+i*500; f++ {
			fmt.Fprintf(&src, "// Step%d_%d does step %d of stage %d: it reads the input, checks it and returns what it computed.\nfunc Step%d_%d(in []byte) (int, error) {\n\tif len(in) == 0 {\n\t\treturn 0, errEmpty\n\t}\n\treturn len(in) * %d, nil\n}\n\n", i, f, f, i, i, f, f+i)
		}
		if err := os.WriteFile(filepath.Join(folder, fmt.Sprintf("stage%d.go", i)), []byte(src.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	var srv *llmtest.Server
	srv = llmtest.NewServer(tb, func(r llmtest.Request) llmtest.Reply {
		// A server that counts the prompt reports about bytes/4 tokens.
		usage := &llmtest.Usage{Prompt: int64(len(r.Body) / 4), Completion: 60}
		last := r.Last()
		turn := strings.Count(string(r.Body), `"role":"user"`)
		switch {
		case last.Role == "user":
			return llmtest.Reply{Text: []string{"I'll read the file first."}, Usage: usage,
				ToolCalls: []llmtest.ToolCall{llmtest.Call(fmt.Sprintf("r%d", turn), "read_file", fmt.Sprintf(`{"path":"stage%d.go"}`, turn))}}
		case last.Role == "tool" && strings.HasPrefix(last.ToolCallID, "r"):
			return llmtest.Reply{Text: []string{"Now where it is called."}, Usage: usage,
				ToolCalls: []llmtest.ToolCall{llmtest.Call(fmt.Sprintf("g%d", turn), "grep", fmt.Sprintf(`{"pattern":"Step%d_[0-9]+\\(in"}`, turn))}}
		default:
			return llmtest.Reply{Text: []string{fmt.Sprintf("Stage %d checks its input and scales it; ", turn),
				strings.Repeat("each step returns the length times its factor, and an empty input is an error. ", 5)}, Usage: usage}
		}
	})
	ed := &turnEditor{ended: make(chan uint64, 1)}
	h := NewHost(HostOptions{
		Editor: ed,
		Config: func(string, []config.Override) (config.Config, error) {
			cfg := config.Default()
			cfg.Model.Name, cfg.Model.BaseURL = "bench", srv.BaseURL()
			cfg.Hooks.AutoCommit = false
			cfg.Agent.ElideAfterTurns = keep
			return cfg, nil
		},
		Provider: func(cfg config.Config, getenv func(string) string) (llm.Provider, error) {
			return NewProvider(cfg, getenv)
		},
		StateDir: tb.TempDir(),
	})
	defer h.Close()
	s, err := h.AddFolder(folder)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	for i := 1; i <= 8; i++ {
		turn, err := s.Ask(ctx, fmt.Sprintf("Explain what stage%d.go does and where its steps are used.", i))
		if err != nil {
			tb.Fatal(err)
		}
		select {
		case got := <-ed.ended:
			if got != turn {
				tb.Fatalf("turn %d ended, want %d", got, turn)
			}
		case <-time.After(time.Minute):
			tb.Fatalf("turn %d did not end", turn)
		}
	}
	var prompts [][][]byte
	for _, r := range srv.Requests() {
		var wire struct {
			Tools    json.RawMessage   `json:"tools"`
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(r.Body, &wire); err != nil {
			tb.Fatal(err)
		}
		p := [][]byte{wire.Tools}
		for _, m := range wire.Messages {
			p = append(p, m)
		}
		prompts = append(prompts, p)
	}
	if len(prompts) != 24 {
		tb.Fatalf("%d requests, want 3 per turn", len(prompts))
	}
	return prompts
}

// prefixFigures returns the share of prompt bytes that are not a prefix
// of the previous request, and the prompt bytes sent per turn.
func prefixFigures(prompts [][][]byte) (fresh float64, perTurn int) {
	var total, fresh1 int
	var prev []byte
	for _, p := range prompts {
		cur := bytes.Join(p, nil)
		n := 0
		for n < len(cur) && n < len(prev) && cur[n] == prev[n] {
			n++
		}
		total += len(cur)
		fresh1 += len(cur) - n
		prev = cur
	}
	return float64(fresh1) / float64(total), total / 8
}

// TestPrefixStability: with the default settings, at most 12 % of the
// prompt bytes of the measured 8-turn session are not a prefix of the
// previous request (30 % when old tool results were elided at every turn
// start), and no more bytes are sent than with elision off.
func TestPrefixStability(t *testing.T) {
	def, off := prefixSession(t, config.Default().Agent.ElideAfterTurns), prefixSession(t, 0)
	freshDef, sentDef := prefixFigures(def)
	freshOff, sentOff := prefixFigures(off)
	t.Logf("default: %.1f %% fresh, %d prompt bytes per turn; elision off: %.1f %% fresh, %d bytes per turn", 100*freshDef, sentDef, 100*freshOff, sentOff)
	if freshDef > 0.12 {
		t.Errorf("%.1f %% of the prompt bytes are fresh with the default settings, want ≤ 12 %%", 100*freshDef)
	}
	if sentDef > sentOff {
		t.Errorf("%d prompt bytes per turn with the default settings, more than with elision off (%d)", sentDef, sentOff)
	}
}

// BenchmarkPrefixStability reports the share of fresh prompt bytes over
// the 8-turn session (fresh-%) and the prompt bytes per turn
// (sent-B/turn), with the default settings and with elision off, and the
// ratio of the default's fresh share to elision off's. Measured before
// batched elision (every turn start elided a tool result): default 30.7
// % fresh; after: see the note of issue 32.
func BenchmarkPrefixStability(b *testing.B) {
	var freshOff float64
	for _, mode := range []struct {
		name string
		keep int
	}{{"elision-off", 0}, {"default", config.Default().Agent.ElideAfterTurns}} {
		b.Run(mode.name, func(b *testing.B) {
			var fresh float64
			var sent int
			for b.Loop() {
				fresh, sent = prefixFigures(prefixSession(b, mode.keep))
			}
			b.ReportMetric(100*fresh, "fresh-%")
			b.ReportMetric(float64(sent), "sent-B/turn")
			if mode.keep == 0 {
				freshOff = fresh
			} else if freshOff > 0 {
				b.ReportMetric(fresh/freshOff, "fresh/elision-off")
			}
		})
	}
}

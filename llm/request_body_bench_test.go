package llm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// turnRequests runs a state machine through n turns of a coding
// conversation — a question, a read_file call, its 1.5 KB result, a
// 600-byte answer — and returns the first request of each turn: the one
// that carries the previous turn's answer and the new question.
func turnRequests(b *testing.B, n int) []fsm.SendLlmRequest {
	m := fsm.New(fsm.Config{SystemPrompt: strings.Repeat("You are loom, a coding agent. ", 40),
		Tools: map[string]fsm.ToolSpec{"read_file": {}}, MaxIterations: 1 << 20})
	var firsts []fsm.SendLlmRequest
	step := func(ev fsm.Event) []fsm.Action {
		acts, err := m.Step(ev)
		if err != nil {
			b.Fatal(err)
		}
		return acts
	}
	find := func(acts []fsm.Action) (fsm.SendLlmRequest, bool) {
		for _, a := range acts {
			if r, ok := a.(fsm.SendLlmRequest); ok {
				return r, true
			}
		}
		return fsm.SendLlmRequest{}, false
	}
	for turn := 1; turn <= n; turn++ {
		req, ok := find(step(fsm.UserInput{Text: fmt.Sprintf("Turn %d: please look at pkg%d/file.go and fix the failing test in it.", turn, turn)}))
		if !ok {
			b.Fatal("no request")
		}
		firsts = append(firsts, req)
		step(fsm.LlmTextDelta{Request: req.Request, Text: "Let me read the file first."})
		call := fsm.ToolCall{ID: fmt.Sprintf("call_%d", turn), Name: "read_file", Arguments: fmt.Sprintf(`{"path":"pkg%d/file.go"}`, turn)}
		step(fsm.LlmCompleted{Request: req.Request, ToolCalls: []fsm.ToolCall{call}})
		result := strings.Repeat(fmt.Sprintf("func f%d() { return \"x\" } // line\n", turn), 40)
		req, ok = find(step(fsm.ToolCompleted{Turn: req.Turn, CallID: call.ID, Result: result}))
		if !ok {
			b.Fatal("no request after the tool")
		}
		step(fsm.LlmTextDelta{Request: req.Request, Text: strings.Repeat("The test failed because of an off-by-one. ", 15)})
		step(fsm.LlmCompleted{Request: req.Request})
	}
	return firsts
}

// cpuTime is the CPU time (user + system) of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTurnCPU measures one model request at turns 1, 50, 100 and
// 200 of a conversation (issue 16 item 4): the body built and sent over
// local HTTP to a server that reads it and streams a short answer, the
// answer decoded. "cached" is the provider as it runs; before each
// request its cache is put back to what it held after the previous turn's
// last request, so the turn's new messages (the previous answer and the
// new question, plus any result just elided) are encoded each time.
// "uncached" encodes every message for every request, as before. Besides
// ns/op it reports the process's CPU time per turn and the body's size.
func BenchmarkTurnCPU(b *testing.B) {
	answer := []byte(`data: {"choices":[{"index":0,"delta":{"content":"Fixed."}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}` + "\n\n" +
		"data: [DONE]\n\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(answer)
	}))
	defer srv.Close()
	firsts := turnRequests(b, 200)
	tools := []ToolSchema{{Name: "read_file", Description: "Read a file of the workspace.",
		Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}
	for _, mode := range []string{"cached", "uncached"} {
		for _, turn := range []int{1, 50, 100, 200} {
			b.Run(fmt.Sprintf("%s/turn=%d", mode, turn), func(b *testing.B) {
				p, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				p.cfg.EncodeEveryMessage = mode == "uncached"
				req := Request{ID: firsts[turn-1].Request, Messages: firsts[turn-1].Messages, Tools: tools}
				var prev []fsm.Message
				if turn > 1 {
					// The previous turn's last request: its messages are
					// this request's but for the answer and the question.
					prev = req.Messages[:len(req.Messages)-2]
				}
				body, _ := p.requestBody(p.Dialect(), req)
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					p.forgetNewerThan(prev)
					done := false
					p.Stream(context.Background(), req, func(ev fsm.Event) {
						switch ev := ev.(type) {
						case fsm.LlmCompleted:
							done = true
						case fsm.LlmError:
							b.Fatal(ev.Message)
						}
					})
					if !done {
						b.Fatal("no completion")
					}
				}
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/turn")
				b.ReportMetric(float64(len(body))/1024, "body-KiB")
			})
		}
	}
}

// forgetNewerThan puts the cache back to what it held after a request
// carrying prev: entries for messages that are not prev's are dropped.
func (p *OpenAI) forgetNewerThan(prev []fsm.Message) {
	c := &p.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.enc {
		if i >= len(prev) || !sameMessage(&c.msgs[i], &prev[i]) {
			c.enc[i] = nil
		}
	}
}

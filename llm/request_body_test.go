package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/option"
	"pgregory.net/rapid"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// uncachedBody is the body openai-go itself writes for req: the whole
// parameters encoded at once, then "stream": true set the way
// option.WithJSONSet sets it (TestRequestBodyOnTheWire checks that).
func uncachedBody(t testing.TB, p *OpenAI, req Request) []byte {
	t.Helper()
	params, err := p.buildParams(p.Dialect(), req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	return append(b[:len(b)-1:len(b)-1], streamField...)
}

// TestRequestBodyOnTheWire sends the same conversation twice to a real
// HTTP server: once through openai-go's own encoder (the parameters and
// option.WithJSONSet, as before the cache), once as Stream sends it, after
// an earlier request warmed the cache. The server must receive the same
// bytes.
func TestRequestBodyOnTheWire(t *testing.T) {
	srv := newFakeServer(t, serveSSE(fixture(t, "text_chunks.sse")))
	temp := 0.5
	p := newTestProvider(t, srv.URL, func(c *OpenAIConfig) { c.MaxTokens = 99; c.Temperature = &temp })
	req := fullRequest()

	params, err := p.buildParams(p.Dialect(), req)
	if err != nil {
		t.Fatal(err)
	}
	var resp *http.Response
	if err := p.client.Post(context.Background(), "chat/completions", params, &resp, option.WithJSONSet("stream", true)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := srv.last(t).body

	warm := req
	warm.Messages = req.Messages[:3]
	run(t, p, warm)
	run(t, p, req)
	got := srv.last(t).body
	if !bytes.Equal(got, want) {
		t.Fatalf("cached body differs from openai-go's:\n got %s\nwant %s", got, want)
	}
	if !bytes.Equal(uncachedBody(t, p, req), want) {
		t.Fatal("uncachedBody does not reproduce openai-go's body")
	}
}

// conversation drives a real state machine with a scripted model, so the
// requests carry what the machine really sends: an append-only history,
// old tool results elided, compactions.
type conversation struct {
	m        *fsm.Machine
	rt       *rapid.T
	requests []fsm.SendLlmRequest
	queue    []fsm.Action
}

func newConversation(rt *rapid.T, window int) *conversation {
	m := fsm.New(fsm.Config{
		SystemPrompt:  "You are loom.",
		Tools:         map[string]fsm.ToolSpec{"read_file": {}, "edit_file": {Mutating: true}},
		ContextWindow: window,
		KeepToolTurns: rapid.IntRange(1, 3).Draw(rt, "keepToolTurns"),
		MaxIterations: 1 << 20,
	})
	return &conversation{m: m, rt: rt}
}

func (c *conversation) step(ev fsm.Event) {
	acts, err := c.m.Step(ev)
	if err != nil {
		c.rt.Fatalf("%s: %v", ev.Describe(), err)
	}
	c.queue = append(c.queue, acts...)
}

// turn runs one user turn (or a compaction on demand) to its end,
// returning the requests it sent.
func (c *conversation) turn(input string) []fsm.SendLlmRequest {
	c.requests = c.requests[:0]
	if input == "" {
		c.step(fsm.Compact{})
	} else {
		c.step(fsm.UserInput{Text: input})
	}
	for len(c.queue) > 0 {
		a := c.queue[0]
		c.queue = c.queue[1:]
		switch a := a.(type) {
		case fsm.SendLlmRequest:
			c.requests = append(c.requests, a)
			c.answer(a)
		case fsm.ExecuteTools:
			for i, call := range a.Calls {
				size := rapid.SampledFrom([]int{10, 300, 2000, 5000}).Draw(c.rt, "resultSize")
				c.step(fsm.ToolCompleted{Turn: a.Turn, CallID: call.ID,
					Result: strings.Repeat(fmt.Sprintf("%d·line %q\n", i, call.Arguments), 1+size/20)})
			}
		case fsm.RunPostToolsHook:
			c.step(fsm.PostToolsHookCompleted{Turn: a.Turn, ActionTaken: "committed abc123"})
		}
	}
	return c.requests
}

// answer streams a model response: text, or tool calls (never for a
// compaction), with usage like a server's.
func (c *conversation) answer(a fsm.SendLlmRequest) {
	text := rapid.StringMatching(`[a-zA-Z <>&"é\\\n]{0,40}`).Draw(c.rt, "text")
	var calls []fsm.ToolCall
	if !a.Compaction && a.Iteration < 3 {
		for i := range rapid.IntRange(0, 2).Draw(c.rt, "calls") {
			name := rapid.SampledFrom([]string{"read_file", "edit_file"}).Draw(c.rt, "tool")
			calls = append(calls, fsm.ToolCall{ID: fmt.Sprintf("call_%d_%d", a.Request, i), Name: name,
				Arguments: fmt.Sprintf(`{"path":"f%d.go"}`, i)})
		}
	}
	if text == "" && len(calls) == 0 {
		text = "done" // an empty answer is asked again (fsm): not a turn's end
	}
	if text != "" {
		c.step(fsm.LlmTextDelta{Request: a.Request, Text: text})
	}
	bytes := 0
	for _, m := range a.Messages {
		bytes += len(m.Content)
	}
	c.step(fsm.LlmCompleted{Request: a.Request, ToolCalls: calls,
		Usage: fsm.Usage{PromptTokens: int64(bytes / 4), CompletionTokens: 10, TotalTokens: int64(bytes/4 + 10)}})
}

// TestRequestBodyMatchesUncachedEncoder checks, for random conversations
// with old tool results elided and compactions (by size and on demand),
// that every request body built from the cache is byte for byte the one
// openai-go encodes from scratch. Two conversations share the provider
// now and then, as sessions sharing a provider would.
func TestRequestBodyMatchesUncachedEncoder(t *testing.T) {
	p, err := NewOpenAI(OpenAIConfig{BaseURL: "http://127.0.0.1:1/v1", Model: "m", MaxTokens: 50})
	if err != nil {
		t.Fatal(err)
	}
	tools := []ToolSchema{{Name: "read_file", Description: "Read.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	compactions, elided, requests := 0, 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		window := rapid.SampledFrom([]int{0, 3000, 8000}).Draw(rt, "window")
		convs := []*conversation{newConversation(rt, window), newConversation(rt, window)}
		for range rapid.IntRange(1, 25).Draw(rt, "turns") {
			c := convs[0]
			if rapid.IntRange(0, 9).Draw(rt, "other") == 0 {
				c = convs[1]
			}
			input := rapid.SampledFrom([]string{"", "fix the bug", "and now the tests", "go on"}).Draw(rt, "input")
			for _, a := range c.turn(input) {
				if a.Compaction {
					compactions++
				}
				for _, m := range a.Messages {
					if strings.Contains(m.Content, "elided") {
						elided++
					}
				}
				requests++
				req := Request{ID: a.Request, Messages: a.Messages, Tools: tools}
				got, err := p.requestBody(p.Dialect(), req)
				if err != nil {
					rt.Fatal(err)
				}
				if want := uncachedBody(t, p, req); !bytes.Equal(got, want) {
					rt.Fatalf("request %d: cached body differs:\n got %s\nwant %s", a.Request, got, want)
				}
			}
		}
	})
	t.Logf("%d requests, %d compactions, %d elided results", requests, compactions, elided)
	if compactions == 0 || elided == 0 {
		t.Fatal("the conversations drew no compaction or no elided tool result: the test checks too little")
	}
}

// TestSameMessageKnowsEveryField: sameMessage decides whether a cached
// encoding is reused, so it must compare every field of fsm.Message and
// fsm.ToolCall. A field added to either without a comparison here would
// let a request reuse a stale encoding; this test fails first.
func TestSameMessageKnowsEveryField(t *testing.T) {
	if n := reflect.TypeFor[fsm.Message]().NumField(); n != 8 {
		t.Errorf("fsm.Message has %d fields; sameMessage compares 8: update it, then this count", n)
	}
	if n := reflect.TypeFor[fsm.ToolCall]().NumField(); n != 4 {
		t.Errorf("fsm.ToolCall has %d fields; sameMessage compares them with ==: check that still holds, then this count", n)
	}
	base := fsm.Message{Role: fsm.RoleAssistant, Content: "c", ToolCallID: "id", ToolCalls: []fsm.ToolCall{{ID: "1", Name: "n", Arguments: "{}"}}}
	variants := []func(*fsm.Message){
		func(m *fsm.Message) { m.Role = fsm.RoleUser },
		func(m *fsm.Message) { m.Content = "d" },
		func(m *fsm.Message) { m.ToolCallID = "other" },
		func(m *fsm.Message) { m.ToolCalls = nil },
		func(m *fsm.Message) { m.ToolCalls = []fsm.ToolCall{{ID: "1", Name: "n", Arguments: `{"a":1}`}} },
		func(m *fsm.Message) { m.Reasoning = "r" },
		func(m *fsm.Message) { m.Note = true },
		func(m *fsm.Message) { m.Opaque = fsm.Opaque{API: "responses", Data: "[]"} },
		func(m *fsm.Message) { m.Images = []fsm.Image{{Hash: "h", MIME: "image/png", Size: 1}} },
		func(m *fsm.Message) {
			m.ToolCalls = []fsm.ToolCall{{ID: "1", Name: "n", Arguments: "{}", Signature: "s"}}
		},
	}
	for i, change := range variants {
		m := base
		m.ToolCalls = append([]fsm.ToolCall(nil), base.ToolCalls...)
		change(&m)
		if sameMessage(&base, &m) {
			t.Errorf("variant %d: sameMessage(%+v, %+v) = true", i, base, m)
		}
	}
	same := base
	if !sameMessage(&base, &same) {
		t.Error("a message is not the same as its copy")
	}
}

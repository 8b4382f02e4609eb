// Package llmtest is a scripted OpenAI-compatible model server for tests:
// a real HTTP server that speaks the Chat Completions streaming wire format
// (server-sent events, the chunk shape OpenAI sends, usage in the last
// chunk, "data: [DONE]") and records every request body it receives. Only
// the model's answers are scripted, by a function of the request.
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Message is one message of a recorded request, in the OpenAI wire shape.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	// Images are the image_url parts' URLs of a content array (the text
	// parts, joined, are Content).
	Images []string `json:"-"`
}

// UnmarshalJSON reads content as a string or as an array of parts.
func (m *Message) UnmarshalJSON(b []byte) error {
	var w struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id,omitempty"`
		ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = Message{Role: w.Role, ToolCallID: w.ToolCallID, ToolCalls: w.ToolCalls}
	if len(w.Content) == 0 || string(w.Content) == "null" {
		return nil
	}
	if w.Content[0] != '[' {
		return json.Unmarshal(w.Content, &m.Content)
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(w.Content, &parts); err != nil {
		return err
	}
	for _, p := range parts {
		switch p.Type {
		case "text":
			m.Content += p.Text
		case "image_url":
			m.Images = append(m.Images, p.ImageURL.URL)
		}
	}
	return nil
}

// ToolCall is a tool call of a recorded assistant message, or one the
// server streams in a Reply.
type ToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Call returns a ToolCall of the given id, tool name and JSON arguments.
func Call(id, name, arguments string) ToolCall {
	var c ToolCall
	c.ID, c.Function.Name, c.Function.Arguments = id, name, arguments
	return c
}

// Request is one request the server received.
type Request struct {
	// Body is the raw request body.
	Body []byte
	// Model and Messages are decoded from it.
	Model    string
	Messages []Message
	// MaxTokensField names the field that bounds the answer
	// ("max_tokens", "max_completion_tokens"), "" when none was sent.
	MaxTokensField string
}

// LastUser returns the content of the request's last user message.
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Last returns the request's last message.
func (r Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Usage is the token usage a Reply reports in its last chunk. Cached
// and Reasoning, when not nil, are sent as
// prompt_tokens_details.cached_tokens and
// completion_tokens_details.reasoning_tokens; nil leaves the details
// out, as servers that do not count them do.
type Usage struct {
	Prompt, Completion int64
	Cached, Reasoning  *int64
}

// Int returns a pointer to n, for Usage's optional counts.
func Int(n int64) *int64 { return &n }

// Reply is the scripted answer to one request.
type Reply struct {
	// Status, when not 0 or 200, answers with this HTTP status and
	// ErrorBody (a JSON error object) instead of a stream.
	Status    int
	ErrorBody string
	// Reasoning chunks stream first, as delta.reasoning_content (vLLM,
	// llama.cpp, DeepSeek) or, with ReasoningField "reasoning", as
	// delta.reasoning (OpenRouter, Ollama).
	Reasoning      []string
	ReasoningField string
	// Text chunks stream next, as delta.content.
	Text []string
	// ToolCalls stream after the text, one chunk each.
	ToolCalls []ToolCall
	// Usage, when set, is reported in a last chunk with no choices.
	Usage *Usage
	// Pace is waited before each chunk. A client that goes away ends the
	// stream.
	Pace time.Duration
}

// Server is the scripted model server. Its URL plus "/v1" is the
// base_url of a client.
type Server struct {
	*httptest.Server
	respond func(Request) Reply

	mu   sync.Mutex
	reqs []Request
	// Extra answers other paths (e.g. "/v1/models"), by path.
	extra map[string]string
}

// NewServer starts a server that answers each chat completion request
// with respond(request); it is closed when the test ends.
func NewServer(t testing.TB, respond func(Request) Reply) *Server {
	s := &Server{respond: respond, extra: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the URL to configure as model.base_url.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Handle makes the server answer GET path with the JSON body.
func (s *Server) Handle(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.extra[path] = body
}

// Requests returns the chat completion requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	extra, ok := s.extra[r.URL.Path]
	s.mu.Unlock()
	if ok {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, extra)
		return
	}
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req := Request{Body: body}
	var wire struct {
		Model               string    `json:"model"`
		Messages            []Message `json:"messages"`
		MaxTokens           *int64    `json:"max_tokens"`
		MaxCompletionTokens *int64    `json:"max_completion_tokens"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		http.Error(w, `{"error":{"message":"bad JSON","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	req.Model, req.Messages = wire.Model, wire.Messages
	switch {
	case wire.MaxCompletionTokens != nil:
		req.MaxTokensField = "max_completion_tokens"
	case wire.MaxTokens != nil:
		req.MaxTokensField = "max_tokens"
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	reply := s.respond(req)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		io.WriteString(w, reply.ErrorBody)
		return
	}
	s.stream(w, r, reply)
}

// chunk is one streamed chat.completion.chunk.
type chunk struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage"`
}

type choice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role             string          `json:"role,omitempty"`
	Content          *string         `json:"content,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	Reasoning        *string         `json:"reasoning,omitempty"`
	ToolCalls        []deltaToolCall `json:"tool_calls,omitempty"`
}

type deltaToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details,omitempty"`
}

// wire is u as Chat Completions reports it: the total is prompt +
// completion; the details only when set.
func (u *Usage) wire() *usage {
	wu := &usage{PromptTokens: u.Prompt, CompletionTokens: u.Completion, TotalTokens: u.Prompt + u.Completion}
	if u.Cached != nil {
		wu.PromptTokensDetails = &struct {
			CachedTokens int64 `json:"cached_tokens"`
		}{*u.Cached}
	}
	if u.Reasoning != nil {
		wu.CompletionTokensDetails = &struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		}{*u.Reasoning}
	}
	return wu
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	out := sseOut{w: w, ctx: r.Context(), pace: reply.Pace}
	out.flusher, _ = w.(http.Flusher)
	for _, c := range reply.chunks() {
		if !out.send(c) {
			return
		}
	}
	io.WriteString(w, "data: [DONE]\n\n")
	if out.flusher != nil {
		out.flusher.Flush()
	}
}

// sseOut writes chunks as server-sent events, each after the pace,
// until the request ends.
type sseOut struct {
	w       io.Writer
	flusher http.Flusher // nil when w cannot flush
	ctx     context.Context
	pace    time.Duration
}

// send writes one chunk; false when the request ended or the write failed.
func (o sseOut) send(c chunk) bool {
	if o.pace > 0 {
		select {
		case <-time.After(o.pace):
		case <-o.ctx.Done():
			return false
		}
	}
	c.ID, c.Object, c.Created, c.Model = "chatcmpl-llmtest", "chat.completion.chunk", 1741570283, "llmtest"
	b, _ := json.Marshal(c)
	if _, err := fmt.Fprintf(o.w, "data: %s\n\n", b); err != nil {
		return false
	}
	if o.flusher != nil {
		o.flusher.Flush()
	}
	return o.ctx.Err() == nil
}

// chunks are the reply's chunks in order: the role, the reasoning (in
// reply.ReasoningField), the text, one chunk per tool call, the finish
// reason, then the usage when there is one.
func (reply Reply) chunks() []chunk {
	one := func(d delta) chunk { return chunk{Choices: []choice{{Delta: d}}} }
	out := []chunk{one(delta{Role: "assistant"})}
	for _, t := range reply.Reasoning {
		d := delta{ReasoningContent: &t}
		if reply.ReasoningField == "reasoning" {
			d = delta{Reasoning: &t}
		}
		out = append(out, one(d))
	}
	for _, t := range reply.Text {
		out = append(out, one(delta{Content: &t}))
	}
	for i, c := range reply.ToolCalls {
		d := deltaToolCall{Index: i, ID: c.ID, Type: "function"}
		d.Function.Name, d.Function.Arguments = c.Function.Name, c.Function.Arguments
		out = append(out, one(delta{ToolCalls: []deltaToolCall{d}}))
	}
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	out = append(out, chunk{Choices: []choice{{FinishReason: &finish}}})
	if u := reply.Usage; u != nil {
		out = append(out, chunk{Choices: []choice{}, Usage: u.wire()})
	}
	return out
}

package completion

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"

	"github.com/loom-lsp/loom-lsp/config"
)

// Request is one fill-in-the-middle request: the text before and after
// the cursor, as sent.
type Request struct {
	// Prefix is the text before the cursor, Suffix the text after it.
	Prefix, Suffix string
	// Name is the file's path relative to its workspace folder.
	Name string
	// Language names the file's language ("go", "python"), "" unknown.
	Language string
	// MaxTokens caps the answer; > 0.
	MaxTokens int
	// Temperature is the sampling temperature; nil leaves it to the
	// server.
	Temperature *float64
	// Stop are the stop sequences; nil for none.
	Stop []string
}

// Client speaks one completion server's FIM API.
type Client struct {
	api, base, model, key string
	http                  *http.Client
}

// maxAnswerBytes bounds a completion server's answer.
const maxAnswerBytes = 1 << 20

// NewClient returns a client of the server cfg names, sending key (""
// for none) as a bearer token. hc is the HTTP client (nil:
// http.DefaultClient).
func NewClient(cfg config.Completion, key string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{api: cfg.API, base: strings.TrimRight(cfg.BaseURL, "/"), model: cfg.Model, key: key, http: hc}
}

// Complete asks the server for the text between r.Prefix and r.Suffix.
// Cancelling ctx aborts the HTTP request.
func (c *Client) Complete(ctx context.Context, r Request) (string, error) {
	path, body := c.encode(r)
	raw, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	resp, err := c.post(ctx, path, raw)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return "", err
	}
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("%s %s: %s: %s", c.api, path, resp.Status, strings.TrimSpace(string(data[:min(len(data), 300)])))
	}
	text, err := c.decode(data)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", c.api, path, err)
	}
	return text, nil
}

// post sends body to path. A request that failed on a kept-alive
// connection the server had closed meanwhile (its idle timeout: Node's is
// 5 s, llama.cpp's and Ollama's their own) is sent once more on a new
// connection: a completion is idempotent, and Go's transport does not
// resend a POST whose bytes were written. Without it, the first keystroke
// after a pause could get no suggestion.
func (c *Client) post(ctx context.Context, path string, body []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		var reused atomic.Bool
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused.Store(i.Reused) }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, c.base+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		if c.key != "" {
			req.Header.Set("Authorization", "Bearer "+c.key)
		}
		resp, err := c.http.Do(req)
		if err == nil || attempt > 0 || !reused.Load() || ctx.Err() != nil {
			return resp, err
		}
	}
}

// encode returns the request's path under the base URL and its body.
func (c *Client) encode(r Request) (string, any) {
	switch c.api {
	case config.CompletionInfill:
		return "/infill", infillBody(r)
	case config.CompletionOllama:
		opts := map[string]any{"num_predict": r.MaxTokens}
		if r.Temperature != nil {
			opts["temperature"] = *r.Temperature
		}
		if r.Stop != nil {
			opts["stop"] = r.Stop
		}
		return "/api/generate", map[string]any{"model": c.model, "prompt": r.Prefix, "suffix": r.Suffix, "stream": false, "options": opts}
	case config.CompletionChat:
		body := map[string]any{"model": c.model, "messages": chatMessages(r), "max_tokens": r.MaxTokens, "stream": false}
		if r.Temperature != nil {
			body["temperature"] = *r.Temperature
		}
		return "/chat/completions", body
	}
	// completions (OpenAI-style) and mistral share the body.
	body := map[string]any{"model": c.model, "prompt": r.Prefix, "suffix": r.Suffix, "max_tokens": r.MaxTokens, "stream": false}
	if r.Temperature != nil {
		body["temperature"] = *r.Temperature
	}
	if r.Stop != nil {
		body["stop"] = r.Stop
	}
	if c.api == config.CompletionMistral {
		return "/v1/fim/completions", body
	}
	return "/completions", body
}

// infillBody is llama.cpp's /infill body: the cursor's line before the
// cursor goes in "prompt", the lines before it in "input_prefix" (as
// llama.vim sends them, so the server's prompt cache keeps the lines).
func infillBody(r Request) map[string]any {
	prefix, line := r.Prefix, ""
	if i := strings.LastIndexByte(prefix, '\n'); i >= 0 {
		prefix, line = r.Prefix[:i+1], r.Prefix[i+1:]
	} else {
		prefix, line = "", r.Prefix
	}
	body := map[string]any{
		"input_prefix": prefix, "prompt": line, "input_suffix": r.Suffix,
		"input_extra": []any{}, "n_predict": r.MaxTokens, "stream": false, "cache_prompt": true,
	}
	if r.Temperature != nil {
		body["temperature"] = *r.Temperature
	}
	if r.Stop != nil {
		body["stop"] = r.Stop
	}
	return body
}

// chatSystem tells a chat model how to fill the middle.
const chatSystem = "You complete code. The user sends a file with the marker <CURSOR> where the cursor is. " +
	"Answer with exactly the text to insert at <CURSOR>: no explanation, no code fence, nothing the file already has " +
	"before or after the cursor. Answer with nothing when nothing fits."

// chatMessages is the FIM prompt of a chat model.
func chatMessages(r Request) []map[string]string {
	var b strings.Builder
	b.WriteString("File: " + r.Name)
	if r.Language != "" {
		b.WriteString(" (" + r.Language + ")")
	}
	b.WriteString("\n\n" + r.Prefix + "<CURSOR>" + r.Suffix)
	return []map[string]string{{"role": "system", "content": chatSystem}, {"role": "user", "content": b.String()}}
}

// decode reads the completion out of a server's answer.
func (c *Client) decode(data []byte) (string, error) {
	var a struct {
		Content  *string `json:"content"`  // llama.cpp /infill
		Response *string `json:"response"` // Ollama /api/generate
		Choices  []struct {
			Text    *string `json:"text"` // /completions
			Message *struct {
				Content string `json:"content"`
			} `json:"message"` // Mistral FIM, chat
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return "", fmt.Errorf("unreadable answer: %w", err)
	}
	switch {
	case c.api == config.CompletionInfill && a.Content != nil:
		return *a.Content, nil
	case c.api == config.CompletionOllama && a.Response != nil:
		return *a.Response, nil
	case len(a.Choices) > 0 && a.Choices[0].Text != nil:
		return *a.Choices[0].Text, nil
	case len(a.Choices) > 0 && a.Choices[0].Message != nil:
		if c.api == config.CompletionChat {
			return stripFence(a.Choices[0].Message.Content), nil
		}
		return a.Choices[0].Message.Content, nil
	}
	return "", errors.New("the answer holds no completion")
}

// stripFence removes a code fence a chat model wrapped its answer in.
func stripFence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return s
	}
	t = strings.TrimSuffix(t, "```")
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		return strings.TrimSuffix(t[i+1:], "\n")
	}
	return s
}

package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// A prompt with a picture goes out as Chat Completions content parts: the
// text, then an image_url with the picture as a data URL, read through
// Request.Images; a picture that cannot be read fails the request with a
// clear error, and nothing is sent.
func TestImagePartsInTheRequest(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"a cat"}} })
	p, err := NewOpenAI(OpenAIConfig{BaseURL: srv.BaseURL(), Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	png := []byte("\x89PNG\r\n\x1a\nfake")
	img := fsm.Image{Hash: "abc123", MIME: "image/png", Size: len(png)}
	read := func(i fsm.Image) ([]byte, error) {
		if i.Hash != "abc123" {
			return nil, errors.New("no such image")
		}
		return png, nil
	}
	msgs := []fsm.Message{{Role: fsm.RoleUser, Content: "what is this?", Images: []fsm.Image{img}}}
	var last fsm.Event
	p.Stream(context.Background(), Request{ID: 1, Messages: msgs, Images: read}, func(ev fsm.Event) { last = ev })
	if _, ok := last.(fsm.LlmCompleted); !ok {
		t.Fatalf("last event %#v", last)
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				ImageURL struct {
					URL string `json:"url"`
				} `json:"image_url"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	parts := body.Messages[0].Content
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	if len(parts) != 2 || parts[0].Type != "text" || parts[0].Text != "what is this?" || parts[1].Type != "image_url" || parts[1].ImageURL.URL != want {
		t.Fatalf("content parts %+v", parts)
	}
	msgs[0].Images = []fsm.Image{{Hash: "gone", MIME: "image/png"}}
	p.Stream(context.Background(), Request{ID: 2, Messages: msgs, Images: read}, func(ev fsm.Event) { last = ev })
	if e, ok := last.(fsm.LlmError); !ok || e.Retryable {
		t.Fatalf("a picture that cannot be read: %#v", last)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests reached the server", n)
	}
}

// AcceptsImages by name: OpenAI's gpt-5.x (Codex, -pro, -mini, -nano,
// chat) and the o-series that take pictures, every Claude 3+ model (also
// through OpenRouter's names); not o1-mini/o3-mini, gpt-oss, audio models,
// Claude 2, or names that merely contain "o3".
func TestAcceptsImages(t *testing.T) {
	for model, want := range map[string]bool{"gpt-4o-mini": true, "claude-sonnet-4-5": true, "llava:13b": true, "qwen2.5vl:7b": true, "gemini-2.5-pro": true,
		"gpt-5": true, "gpt-5.1": true, "gpt-5.2": true, "gpt-5.1-codex-max": true, "gpt-5-mini": true, "gpt-5-nano": true, "gpt-5.2-pro": true,
		"gpt-5.1-chat-latest": true, "openai/gpt-5.1": true, "gpt-4.1-mini": true, "o1": true, "o3": true, "o3-pro": true, "o4-mini": true,
		"openai/o3": true, "codex-mini-latest": true,
		"claude-opus-4-5": true, "claude-sonnet-4-6": true, "claude-haiku-4-5": true, "claude-opus-4-1-20250805": true,
		"claude-3-7-sonnet-latest": true, "claude-3-5-haiku-latest": true, "anthropic/claude-sonnet-4.5": true, "anthropic/claude-opus-4.1": true,
		"o1-mini": false, "o3-mini": false, "o1-preview": false, "gpt-oss-120b": false, "gpt-4o-audio-preview": false, "gpt-4o-mini-tts": false,
		"claude-2.1": false, "qwen3-coder:30b": false, "falcon3": false, "foo3": false,
		"qwen2.5-coder": false, "deepseek-chat": false, "scripted": false} {
		if got := AcceptsImages(model); got != want {
			t.Errorf("AcceptsImages(%q) = %v", model, got)
		}
	}
}

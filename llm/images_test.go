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

func TestAcceptsImages(t *testing.T) {
	for model, want := range map[string]bool{"gpt-4o-mini": true, "claude-sonnet-4-5": true, "llava:13b": true, "qwen2.5vl:7b": true, "gemini-2.5-pro": true,
		"qwen2.5-coder": false, "deepseek-chat": false, "scripted": false} {
		if got := AcceptsImages(model); got != want {
			t.Errorf("AcceptsImages(%q) = %v", model, got)
		}
	}
}

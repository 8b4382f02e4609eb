package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// pixelPNG is a real 1×1 PNG: the servers check that the bytes are the
// picture the media type says.
func pixelPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// imageReader serves one picture by hash.
func imageReader(hash string, b []byte) ImageSource {
	return func(i fsm.Image) ([]byte, error) {
		if i.Hash != hash {
			return nil, errors.New("no such image")
		}
		return b, nil
	}
}

// checkDataURL refuses what OpenAI refuses in an input_image's image_url:
// a data URL that is not an image MIME type in base64, or whose bytes are
// not that picture.
func checkDataURL(url string) string {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return "Invalid 'image_url'. Expected a valid URL, but got a value with an invalid format."
	}
	mime, data, ok := strings.Cut(rest, ";base64,")
	b, err := base64.StdEncoding.DecodeString(data)
	if !ok || err != nil || !strings.HasPrefix(mime, "image/") {
		return fmt.Sprintf("Invalid 'image_url'. Expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got unsupported MIME type '%s'.", mime)
	}
	if got := http.DetectContentType(b); got != mime {
		return "You uploaded an unsupported image. Please make sure your image is valid."
	}
	return ""
}

// A picture over the Responses API: the user message is a list of
// content parts, input_text then input_image with the picture as a data
// URL — the shape of OpenAI's vision guide for the Responses API
// ({"type":"input_text","text":…},{"type":"input_image","image_url":"data:image/png;base64,…"}),
// in the SDK's key order — in the first request and in every later one;
// an unreadable picture sends nothing.
func TestResponsesImageInput(t *testing.T) {
	srv := newResponsesServer(t, func(_ string, body map[string]json.RawMessage) (int, http.Header, string) {
		var input []struct {
			Role    string `json:"role"`
			Content json.RawMessage
		}
		json.Unmarshal(body["input"], &input)
		for _, it := range input {
			var parts []struct {
				Type     string `json:"type"`
				ImageURL string `json:"image_url"`
			}
			if json.Unmarshal(it.Content, &parts) != nil {
				continue
			}
			for _, p := range parts {
				if msg := checkDataURL(p.ImageURL); p.Type == "input_image" && msg != "" {
					return 400, nil, fmt.Sprintf(`{"error":{"message":%q,"type":"invalid_request_error","param":"input","code":"invalid_value"}}`, msg)
				}
			}
		}
		return 200, nil, respFixture(t, "answer.sse")
	})
	p := responsesProvider(t, srv, OpenAIConfig{API: APIResponses})
	pic := pixelPNG(t)
	read := imageReader("abc123", pic)
	user := fsm.Message{Role: fsm.RoleUser, Content: "what is this?", Images: []fsm.Image{{Hash: "abc123", MIME: "image/png", Size: len(pic)}}}
	got := streamOnce(t, p, Request{ID: 1, Messages: []fsm.Message{user}, Images: read})
	if got.err != nil {
		t.Fatal(got.err.Message)
	}
	want := `{"content":[{"text":"what is this?","type":"input_text"},{"detail":"auto","image_url":"data:image/png;base64,` +
		base64.StdEncoding.EncodeToString(pic) + `","type":"input_image"}],"role":"user"}`
	if _, body := srv.last(); !strings.Contains(body, `"input":[`+want+`]`) {
		t.Fatalf("request input is not %s:\n%s", want, body)
	}
	next := []fsm.Message{user, {Role: fsm.RoleAssistant, Content: "A red pixel."}, {Role: fsm.RoleUser, Content: "and now?"}}
	if got := streamOnce(t, p, Request{ID: 2, Messages: next, TurnStart: 2, Images: read}); got.err != nil {
		t.Fatal(got.err.Message)
	}
	if _, body := srv.last(); !strings.Contains(body, `"input":[`+want+`,`) {
		t.Fatalf("the picture is not in the later turn's request:\n%s", body)
	}
	user.Images[0].MIME = "image/jpeg" // the bytes are a PNG: the server refuses
	if got := streamOnce(t, p, Request{ID: 3, Messages: []fsm.Message{user}, Images: read}); got.err == nil || !strings.Contains(got.err.Message, "unsupported image") {
		t.Fatalf("a picture that is not its media type: %+v", got)
	}
	srv.mu.Lock()
	sent := len(srv.bodies)
	srv.mu.Unlock()
	user.Images[0].Hash = "gone"
	if got := streamOnce(t, p, Request{ID: 4, Messages: []fsm.Message{user}, Images: read}); got.err == nil || got.err.Retryable {
		t.Fatalf("a picture that cannot be read: %+v", got)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.bodies) != sent {
		t.Fatal("a request with an unreadable picture reached the server")
	}
}

// checkImageBlock refuses what Anthropic refuses in an image block: a
// source that is not base64 of a supported media type, or bytes that are
// not that picture.
func checkImageBlock(raw json.RawMessage) string {
	var b struct {
		Source struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		} `json:"source"`
	}
	json.Unmarshal(raw, &b)
	switch b.Source.MediaType {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
	default:
		return "source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
	}
	data, err := base64.StdEncoding.DecodeString(b.Source.Data)
	if b.Source.Type != "base64" || err != nil {
		return "source.base64.data: invalid base64 data"
	}
	if http.DetectContentType(data) != b.Source.MediaType {
		return "source.base64.data: Image does not match the provided media type " + b.Source.MediaType
	}
	return ""
}

// A picture over the Messages API: an image block with a base64 source
// ({"type":"image","source":{"type":"base64","media_type":"image/png","data":…}},
// the shape of Anthropic's vision docs and of anthropic-sdk-go's
// NewImageBlockBase64) before the text, in the first request and every
// later one; a text-less prompt sends the picture alone (no empty text
// block); an unreadable picture sends nothing.
func TestAnthropicImageInput(t *testing.T) {
	srv := newMessagesServer(t, func(body string) (int, http.Header, string) {
		var req struct {
			Messages []struct {
				Content []json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal([]byte(body), &req)
		for i, m := range req.Messages {
			for j, raw := range m.Content {
				var b struct{ Type string }
				json.Unmarshal(raw, &b)
				if msg := checkImageBlock(raw); b.Type == "image" && msg != "" {
					return 400, nil, fmt.Sprintf(`{"type":"error","error":{"type":"invalid_request_error","message":"messages.%d.content.%d.image.%s"}}`, i, j, msg)
				}
			}
		}
		return 200, nil, msgFixture(t, "answer.sse")
	})
	p := anthropicProvider(t, srv, AnthropicConfig{})
	pic := pixelPNG(t)
	read := imageReader("abc123", pic)
	user := fsm.Message{Role: fsm.RoleUser, Content: "what is this?", Images: []fsm.Image{{Hash: "abc123", MIME: "image/png", Size: len(pic)}}}
	if r := streamAnthropic(t, p, Request{ID: 1, Messages: []fsm.Message{user}, Images: read}); r.err != nil {
		t.Fatal(r.err.Message)
	}
	img := `{"source":{"data":"` + base64.StdEncoding.EncodeToString(pic) + `","media_type":"image/png","type":"base64"},"type":"image"}`
	if body := srv.last(); !strings.Contains(body, `"messages":[{"content":[`+img+`,{"text":"what is this?",`) {
		t.Fatalf("request messages do not start with the image block %s then the text:\n%s", img, body)
	}
	next := []fsm.Message{user, {Role: fsm.RoleAssistant, Content: "A red pixel."}, {Role: fsm.RoleUser, Content: "and now?"}}
	if r := streamAnthropic(t, p, Request{ID: 2, Messages: next, TurnStart: 2, Images: read}); r.err != nil {
		t.Fatal(r.err.Message)
	}
	if body := srv.last(); !strings.Contains(body, `"messages":[{"content":[`+img+`,`) {
		t.Fatalf("the picture is not in the later turn's request:\n%s", body)
	}
	alone := fsm.Message{Role: fsm.RoleUser, Images: user.Images}
	if r := streamAnthropic(t, p, Request{ID: 3, Messages: []fsm.Message{alone}, Images: read}); r.err != nil {
		t.Fatal(r.err.Message)
	}
	user.Images = []fsm.Image{{Hash: "abc123", MIME: "image/gif"}}
	if r := streamAnthropic(t, p, Request{ID: 4, Messages: []fsm.Message{user}, Images: read}); r.err == nil || !strings.Contains(r.err.Message, "does not match") {
		t.Fatalf("a picture that is not its media type: %+v", r)
	}
	srv.mu.Lock()
	sent := len(srv.bodies)
	srv.mu.Unlock()
	user.Images[0].Hash = "gone"
	if r := streamAnthropic(t, p, Request{ID: 5, Messages: []fsm.Message{user}, Images: read}); r.err == nil || r.err.Retryable {
		t.Fatalf("a picture that cannot be read: %+v", r)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.bodies) != sent {
		t.Fatal("a request with an unreadable picture reached the server")
	}
}

package workspace

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// saidProvider is a model whose server's listing says whether it takes
// pictures (llm.OpenAI and llm.Anthropic's ImagesSaid).
type saidProvider struct {
	funcProvider
	accepts bool
}

func (p saidProvider) ImagesSaid(string) (bool, bool) { return p.accepts, true }

// With model.images = "auto", what the server's listing says wins over
// the name: a model named like a vision model that the listing calls
// text-only is refused with the listing's word, nothing sent; one the
// listing calls a vision model takes the picture.
func TestImagesAsTheListingSays(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for _, accepts := range []bool{false, true} {
		sent := make(chan llm.Request, 4)
		model := saidProvider{accepts: accepts, funcProvider: func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
			sent <- req
			respond(req, emit, "a picture")
		}}
		h := newTestHost(t, model, func(c *config.Config) { c.Model.Name = "gpt-4o" })
		s, err := h.AddFolder(gitRepo(t, map[string]string{"a.txt": "a\n"}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.AskWithImages(context.Background(), "what is this?", []ImageInput{{Name: "p.png", Data: png}})
		if !accepts {
			if !errors.Is(err, ErrImage) || !strings.Contains(err.Error(), "model listing says gpt-4o does not take pictures") {
				t.Fatalf("the listing says no: %v", err)
			}
			if len(sent) != 0 {
				t.Fatal("a refused picture reached the model")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		h.editor.turnEnded(t, 1)
		if req := <-sent; len(req.Messages[len(req.Messages)-1].Images) != 1 {
			t.Fatalf("the picture was not sent: %+v", req.Messages)
		}
	}
}

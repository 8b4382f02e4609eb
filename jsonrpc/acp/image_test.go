package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
)

// onePixelPNG is a 1×1 PNG.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// An image block to a model that takes pictures (model.images = "on")
// is stored by hash in the state directory, journaled by reference; to
// one that does not, the prompt is refused (-32602) saying why, and
// nothing is sent. A picture that is not one is refused too.
func TestImagePrompt(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	script := writeScript(t, "[[step]]\nmatch.last_role = \"user\"\nrepeat = true\ntext = [\"A pixel.\"]\n")
	state := t.TempDir()
	h := start(t, script, state, func(c *config.Config) { c.Model.Images = "on" })
	h.initialize(true, true)
	id := h.newSession(dir)
	ctx := testCtx(t)
	img := acpsdk.ImageBlock(onePixelPNG, "image/png")
	r, err := h.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("what is this?"), img}})
	if err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt with an image: %+v, %v", r, err)
	}
	stored, _ := filepath.Glob(filepath.Join(state, "images", "*.png"))
	if len(stored) != 1 {
		t.Fatalf("stored images: %v", stored)
	}
	journals, _ := filepath.Glob(filepath.Join(state, "*", "*.jsonl"))
	if len(journals) == 0 {
		journals, _ = filepath.Glob(filepath.Join(state, "*.jsonl"))
	}
	for _, j := range journals {
		b, _ := os.ReadFile(j)
		if strings.Contains(string(b), onePixelPNG[:40]) {
			t.Fatalf("the journal %s holds the picture inline", j)
		}
	}
	_, err = h.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("and this?"), acpsdk.ImageBlock("bm90IGFuIGltYWdl", "image/png")}})
	if err == nil || !strings.Contains(err.Error(), "not a PNG, JPEG, GIF or WebP") {
		t.Fatalf("a non-picture: %v", err)
	}
	h.stop()

	h2 := start(t, script, t.TempDir(), nil) // model "scripted", images auto
	h2.initialize(true, true)
	id2 := h2.newSession(dir)
	_, err = h2.conn.Prompt(testCtx(t), acpsdk.PromptRequest{SessionId: id2, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("what is this?"), img}})
	if err == nil || !strings.Contains(err.Error(), "not known to take pictures") || !strings.Contains(err.Error(), "model.images") {
		t.Fatalf("an image to a model without pictures: %v", err)
	}
}

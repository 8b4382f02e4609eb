package workspace

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// modelCode is what the model writes: code with a bearer token and the
// configured key in it, which masking would change.
const atRestKey = "sk-atrest-0123456789abcdef"

var modelCode = "```go\nreq.Header.Set(\"Authorization\", \"Bearer abc.DEF-123_x\")\nkey := \"" + atRestKey + "\"\n```\n"

// Secrets at rest: a key pasted in the first prompt is masked in the
// title (the meta file, the listing, the live conversation); the
// resumed conversation gives the model back exactly the code it wrote,
// bearer token and key included, never masked text in its place.
func TestSecretsAtRest(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", atRestKey)
	state, folder := t.TempDir(), t.TempDir()
	var mu sync.Mutex
	var seen [][]fsm.Message
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		mu.Lock()
		seen = append(seen, req.Messages)
		n := len(seen)
		mu.Unlock()
		if n == 1 {
			for _, piece := range []string{modelCode[:30], modelCode[30:70], modelCode[70:]} {
				emit(fsm.LlmTextDelta{Request: req.ID, Text: piece})
			}
			emit(fsm.LlmCompleted{Request: req.ID})
			return
		}
		respond(req, emit, "ok")
	})
	keyed := func(cfg *config.Config) { cfg.Model.APIKeyEnv = "OPENAI_API_KEY" }
	h1 := newTestHostIn(t, state, model, keyed)
	s1, _ := h1.AddFolder(folder)
	if _, err := s1.Ask(context.Background(), "my key is "+atRestKey+", use it"); err != nil {
		t.Fatal(err)
	}
	h1.editor.turnEnded(t, 1)
	if got := h1.editor.text(1); strings.Contains(got, atRestKey) || strings.Contains(got, "abc.DEF") {
		t.Errorf("shown text holds the secrets: %q", got)
	}
	if c, _ := s1.Conversation(context.Background()); strings.Contains(c.Title, atRestKey) || !strings.Contains(c.Title, "[REDACTED]") {
		t.Errorf("live title %q", c.Title)
	}
	h1.Close()

	metas, _ := filepath.Glob(filepath.Join(state, "*.meta.json"))
	if len(metas) == 0 {
		t.Fatal("no meta file")
	}
	for _, m := range metas {
		if b, _ := os.ReadFile(m); bytes.Contains(b, []byte(atRestKey)) {
			t.Errorf("%s holds the key: %s", m, b)
		}
	}
	h2 := newTestHostIn(t, state, model, keyed)
	list, err := h2.Conversations(folder)
	if err != nil || len(list) != 1 || strings.Contains(list[0].Title, atRestKey) || !strings.Contains(list[0].Title, "[REDACTED]") {
		t.Fatalf("listing %+v, %v: want one title, the key masked", list, err)
	}
	s2, _ := h2.AddFolder(folder)
	h2.editor.waitFor(t, "the resume note", func(n Notification) bool {
		return n.Kind == NoteInfo && strings.Contains(n.Text, "resumed")
	})
	if _, err := s2.Ask(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	h2.editor.turnEnded(t, 2)
	mu.Lock()
	defer mu.Unlock()
	last := seen[len(seen)-1]
	var wrote string
	for _, m := range last {
		if m.Role == fsm.RoleAssistant {
			wrote = m.Content
			break
		}
	}
	if wrote != modelCode {
		t.Errorf("the resumed conversation gives the model\n%q\nin place of what it wrote\n%q", wrote, modelCode)
	}
}

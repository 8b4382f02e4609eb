package workspace

import (
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

// A definition's model is used only when it is one of the user's
// [subagents] models (a name, or an alias exactly one of them contains).
func TestChildModel(t *testing.T) {
	allowed := []string{"claude-haiku-4-5", "claude-sonnet-4-5", "gpt-5-mini"}
	for _, tc := range []struct {
		asked, model string
		refused      bool
	}{
		{"", "", false},
		{"inherit", "", false},
		{"gpt-5-mini", "gpt-5-mini", false},
		{"haiku", "claude-haiku-4-5", false},
		{"claude", "", true}, // several
		{"opus", "", true},   // none
		{"gpt-5", "gpt-5-mini", false},
	} {
		model, why := childModel(tc.asked, allowed)
		if model != tc.model || (why != "") != tc.refused {
			t.Errorf("childModel(%q) = %q, %q; want %q, refused %v", tc.asked, model, why, tc.model, tc.refused)
		}
	}
	if model, why := childModel("haiku", nil); model != "" || !strings.Contains(why, "none are listed") {
		t.Errorf("no models listed: %q, %q", model, why)
	}
}

// A child runs on the model its definition names when the user listed it
// in [subagents] models: its every request asks for it. A definition
// naming a model the user did not list runs on the conversation's model,
// and the user is told.
func TestSubagentRunsOnItsDefinitionsModel(t *testing.T) {
	home := t.TempDir()
	agents := filepath.Join(home, ".claude", "agents")
	if err := os.MkdirAll(agents, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, model := range map[string]string{"quick": "haiku", "pricey": "opus"} {
		def := "---\nname: " + name + "\ndescription: reads\ntools: Read\nmodel: " + model + "\n---\nRead.\n"
		if err := os.WriteFile(filepath.Join(agents, name+".md"), []byte(def), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	dir := gitRepo(t, map[string]string{"a.go": "package a\n"})
	var mu sync.Mutex
	models := map[string][]string{} // task -> the models its requests asked for
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		task := childTask(req)
		_, isResult := lastToolResult(req)
		mu.Lock()
		models[task] = append(models[task], req.Model)
		mu.Unlock()
		switch {
		case task == "" && !isResult:
			respond(req, emit, "", agentCall("q1", "quick", "look quickly"), agentCall("p1", "pricey", "look expensively"))
		case task == "":
			respond(req, emit, "parent done")
		default:
			respond(req, emit, "looked")
		}
	})
	h := newTestHost(t, model, func(c *config.Config) { c.Subagents.Models = []string{"claude-haiku-4-5", "gpt-5-mini"} })
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Ask(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	h.editor.turnEndedIn(t, s.ID(), turn)
	mu.Lock()
	defer mu.Unlock()
	quick := models["look quickly"]
	for _, m := range quick {
		if m != "claude-haiku-4-5" {
			quick = nil
		}
	}
	if len(quick) == 0 {
		t.Errorf("quick's requests asked for %q, want claude-haiku-4-5 each", models["look quickly"])
	}
	if got := models["look expensively"]; len(got) == 0 || strings.Join(got, "") != "" {
		t.Errorf("pricey's requests asked for %q, want the conversation's model", got)
	}
	if got := models[""]; strings.Join(got, "") != "" {
		t.Errorf("the parent's requests asked for %q", got)
	}
	h.editor.mu.Lock()
	defer h.editor.mu.Unlock()
	told, named := false, false
	for _, n := range h.editor.notes {
		told = told || n.Kind == NoteInfo && strings.Contains(n.Text, `asks for model "opus", not one of your [subagents] models`)
		named = named || n.Kind == NoteSubagent && n.Subagent != nil && n.Subagent.Agent == "quick" && n.Subagent.Model == "claude-haiku-4-5"
	}
	if !told || !named {
		t.Errorf("the user was told of the refused model: %v; quick's model named: %v", told, named)
	}
}

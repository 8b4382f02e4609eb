package headless

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// What the session says on its own during a turn (a file changed on
// disk, an MCP server is ready: notes without a turn) is an info event of
// the turn under way, valid against the schema, which requires its turn.
func TestSessionNotesBelongToTheTurnUnderWay(t *testing.T) {
	var out bytes.Buffer
	h := New(Options{Format: JSONL, Out: &out, Log: io.Discard})
	defer h.Close()
	h.Begin(workspace.Status{Folder: "/w", ConversationID: "loom-0123456789abcdef0123"}, false)
	h.Notify(workspace.Notification{Kind: workspace.NoteTurnStarted, Turn: 3, Folder: "/w", Text: "hi"})
	h.Notify(workspace.Notification{Kind: workspace.NoteInfo, Text: "changed on disk since the agent read them (it will read them again): a.txt"})
	h.Notify(workspace.Notification{Kind: workspace.NoteError, Text: "the conversation journal could not be written"})

	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("want session_started, turn_started, info, error; got:\n%s", out.String())
	}
	for _, line := range lines {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
	for _, line := range lines[2:] {
		var ev Event
		json.Unmarshal([]byte(line), &ev)
		if ev.Turn != 3 {
			t.Errorf("%s: turn %d, want 3 (the turn under way)", line, ev.Turn)
		}
	}
}

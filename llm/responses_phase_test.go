package llm

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// The items of phase_turn.sse as they must go back: the server's bytes,
// less id and status.
const (
	wantPhaseReasoning = `{"type":"reasoning","encrypted_content":"gAAAAABpC3Xq-ENCRYPTED-P+/==","summary":[]}`
	wantPhaseMessage   = `{"type":"message","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"I'll read a.txt <first>."}],"phase":"commentary","role":"assistant"}`
)

// TestResponsesPhaseRoundTrip: gpt-5.3-codex and later label assistant
// messages with a phase, which OpenAI asks to be sent back on every
// assistant message. The commentary message before a tool call goes back
// as the server wrote it (less id and status), between its reasoning
// item and the call, in the tool loop and in a later turn, and is not
// sent a second time as plain text; the text still streams.
func TestResponsesPhaseRoundTrip(t *testing.T) {
	n := 0
	srv := newResponsesServer(t, func(string, map[string]json.RawMessage) (int, http.Header, string) {
		n++
		if n == 1 {
			return 200, nil, respFixture(t, "phase_turn.sse")
		}
		return 200, nil, respFixture(t, "answer.sse")
	})
	p := responsesProvider(t, srv, OpenAIConfig{API: APIResponses, Model: "gpt-5.3-codex", ReasoningEffort: "medium"})
	user := fsm.Message{Role: fsm.RoleUser, Content: "what does a.txt say?"}
	got := streamOnce(t, p, Request{ID: 1, Messages: []fsm.Message{user},
		Tools: []ToolSchema{{Name: "read_file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}})
	if got.err != nil {
		t.Fatal(got.err.Message)
	}
	if got.text != "I'll read a.txt <first>." {
		t.Errorf("text %q", got.text)
	}
	if want := "[" + wantPhaseReasoning + "," + wantPhaseMessage + "]"; got.done.Opaque != (fsm.Opaque{API: "responses", Data: want}) {
		t.Fatalf("opaque %s\nwant %s", got.done.Opaque.Data, want)
	}
	asst := fsm.Message{Role: fsm.RoleAssistant, Content: got.text, ToolCalls: got.done.ToolCalls, Opaque: got.done.Opaque}
	loop := []fsm.Message{user, asst, {Role: fsm.RoleTool, ToolCallID: "call_Ph4sE1", Content: "hello"}}
	if r := streamOnce(t, p, Request{ID: 2, Messages: loop, TurnStart: 0}); r.err != nil {
		t.Fatalf("the tool loop's request was refused: %s", r.err.Message)
	}
	wantSeq := wantPhaseReasoning + "," + wantPhaseMessage + `,{"arguments":"{\"path\":\"a.txt\"}","call_id":"call_Ph4sE1","name":"read_file","type":"function_call"},{"output":"hello","call_id":"call_Ph4sE1","type":"function_call_output"}`
	_, body := srv.last()
	if !strings.Contains(body, wantSeq) {
		t.Fatalf("the tool loop's input lacks reasoning, the phased message, the call, the output:\n%s\nwant within it:\n%s", body, wantSeq)
	}
	if strings.Count(body, "I'll read a.txt") != 1 {
		t.Errorf("the commentary went back twice:\n%s", body)
	}
	later := append(loop, fsm.Message{Role: fsm.RoleAssistant, Content: "a.txt says hello."}, fsm.Message{Role: fsm.RoleUser, Content: "thanks"})
	if r := streamOnce(t, p, Request{ID: 3, Messages: later, TurnStart: 4}); r.err != nil {
		t.Fatal(r.err.Message)
	}
	if _, body := srv.last(); !strings.Contains(body, wantSeq) {
		t.Errorf("a later turn lost the phased message:\n%s", body)
	}
}

package jsonrpc

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// indexOf returns the index of the first message of method whose params
// contain substr, or -1.
func indexOf(msgs []fakeeditor.Message, method, substr string) int {
	for i, m := range msgs {
		if m.Method == method && strings.Contains(string(m.Params), substr) {
			return i
		}
	}
	return -1
}

// A client slow to answer window/workDoneProgress/create (here: not
// before the test lets it) does not hold up the stream: the turn's text,
// its tool call and the approval request go out in order, and the whole
// turn ends, while the progress tokens are pending. Once the client
// answers, the progress begins and ends on its tokens.
func TestSlowProgressAckDoesNotHoldTheStream(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(open)
	e := newEnv(t, envOptions{
		cfg:         loomClient,
		callTimeout: time.Minute,
		options:     map[string]any{"tools": map[string]any{"bash": "ask"}},
		hooks: fakeeditor.Hooks{WorkDoneProgressCreate: func(ctx context.Context) {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}},
		script: `
[[step]]
match.last_role = "user"
text = ["first ", "words ", "of the turn"]
  [[step.tool_call]]
  name = "bash"
  arguments = '{"command":"echo approved-and-ran"}'

[[step]]
match.last_role = "tool"
text = ["all ", "done"]
`})
	from := len(e.ed.Messages(""))
	e.ask("go")
	e.await("the turn ended with progress pending", turnEnded(e.folder, from))
	msgs := e.ed.Messages("")
	text := indexOf(msgs, MethodDisplayMessage, "first")
	tool := indexOf(msgs, MethodToolCall, "bash")
	approval := indexOf(msgs, protocol.MethodWindowShowMessageRequest, "echo approved-and-ran")
	last := indexOf(msgs, MethodDisplayMessage, "done")
	if text < 0 || tool < 0 || approval < 0 || last < 0 {
		t.Fatalf("missing output while progress was pending: text %d, tool %d, approval %d, final text %d", text, tool, approval, last)
	}
	if !(text < tool && tool < approval && approval < last) {
		t.Errorf("out of order: text %d, tool call %d, approval %d, final text %d", text, tool, approval, last)
	}
	if n := len(e.ed.Messages(protocol.MethodProgress)); n != 0 {
		t.Errorf("%d $/progress sent before the client answered their token's creation", n)
	}
	open()
	e.await("the progress begins and ends once created", func(msgs []fakeeditor.Message) bool {
		return indexOf(msgs, protocol.MethodProgress, `"kind":"begin"`) >= 0 && indexOf(msgs, protocol.MethodProgress, `"kind":"end"`) >= 0
	})
}

package jsonrpc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

// logMessages returns the messages of the window/logMessage notifications
// of type typ.
func logMessages(e *env, typ protocol.MessageType) []string {
	var out []string
	for _, m := range e.ed.Messages(protocol.MethodWindowLogMessage) {
		var p protocol.LogMessageParams
		if json.Unmarshal(m.Params, &p) == nil && p.Type == typ {
			out = append(out, p.Message)
		}
	}
	return out
}

// A client without experimental.loom gets the streamed answer in the log
// one whole line per message (the unfinished rest before a tool call and
// at the turn's end), and tool statuses without a repeated word.
func TestGenericClientGetsWholeLines(t *testing.T) {
	e := newEnv(t, envOptions{script: `
[[step]]
match.last_role = "user"
pace = "20ms"
text = ["Let me ", "look", " first.\nReading ", "a.txt"]
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"a.txt"}'

[[step]]
match.last_role = "tool"
pace = "20ms"
text = ["It ", "says\nhello", "\nand no", "thing else."]
`})
	if err := os.WriteFile(filepath.Join(e.folder, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ask("what does a.txt say?")
	e.await("final answer shown", hasMethod(protocol.MethodWindowShowMessage, "and nothing else."))
	want := []string{"Let me look first.", "Reading a.txt", "It says", "hello", "and nothing else."}
	if got := logMessages(e, protocol.MessageTypeLog); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("log lines = %q, want %q", got, want)
	}
	var sawTool bool
	for _, m := range logMessages(e, protocol.MessageTypeInfo) {
		if !strings.Contains(m, "read_file") {
			continue
		}
		sawTool = true
		words := strings.Fields(strings.ReplaceAll(m, ":", " "))
		for i := 1; i < len(words); i++ {
			if words[i] == words[i-1] {
				t.Errorf("tool status repeats %q: %q", words[i], m)
			}
		}
	}
	if !sawTool {
		t.Error("no tool status in the log")
	}
}

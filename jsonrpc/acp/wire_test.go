package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// session/delete reaches the agent as the extension method it handles;
// other lines, and a line that only mentions session/delete, pass as they
// are, in pieces of any size.
func TestDeleteReaderRenamesOnlyTheMethod(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":7,"method":"session/delete","params":{"sessionId":"loom-1"}}` + "\n" +
		`{"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{"prompt":[{"type":"text","text":"what does \"session/delete\" do?"}]}}` + "\n"
	out, err := io.ReadAll(io.LimitReader(newDeleteReader(strings.NewReader(in), nil), 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines: %q", out)
	}
	var m struct {
		ID     int             `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal([]byte(lines[0]), &m) != nil || m.Method != extSessionDelete || m.ID != 7 || string(m.Params) != `{"sessionId":"loom-1"}` {
		t.Fatalf("session/delete became %s", lines[0])
	}
	if lines[1] != strings.Split(in, "\n")[1] {
		t.Fatalf("a prompt was changed: %s", lines[1])
	}
}

// The initialize response declares sessionCapabilities.delete.
func TestCapsWriterDeclaresDelete(t *testing.T) {
	var b bytes.Buffer
	w := &capsWriter{out: &b}
	msg := `{"jsonrpc":"2.0","id":0,"result":{"agentCapabilities":{"sessionCapabilities":{"list":{}}}}}` + "\n"
	if n, err := w.Write([]byte(msg)); err != nil || n != len(msg) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	var r struct {
		Result struct {
			AgentCapabilities struct {
				SessionCapabilities map[string]any `json:"sessionCapabilities"`
			} `json:"agentCapabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, b.String())
	}
	if _, ok := r.Result.AgentCapabilities.SessionCapabilities["delete"]; !ok {
		t.Fatalf("no delete capability: %s", b.String())
	}
	b.Reset()
	w.Write([]byte(msg))
	if strings.Contains(b.String(), "delete") {
		t.Fatalf("a second message was changed: %s", b.String())
	}
}

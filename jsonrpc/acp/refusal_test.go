package acp

import (
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

const refusedReadScript = `
[[step]]
match.last_user_contains = "read secret.txt"
match.last_role = "user"
text = ["Reading it."]
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"secret.txt"}'

[[step]]
match.last_tool_result_contains = "alpha-on-disk"
text = ["LEAKED"]

[[step]]
match.last_role = "tool"
text = ["refused"]
`

// A client's refusal of fs/read_text_file (acpx --deny-all) is the
// answer: the tool reports it, and loom does not read the file from disk
// instead.
func TestRefusedReadIsFinal(t *testing.T) {
	dir := repo(t, map[string]string{"secret.txt": "alpha-on-disk\n"})
	h := start(t, writeScript(t, refusedReadScript), "", nil)
	h.client.denyFS = true
	h.initialize(true, true)
	id := h.newSession(dir)
	h.mustPrompt(id, "read secret.txt", acpsdk.StopReasonEndTurn)
	text := agentText(h.client.snapshot())
	if strings.Contains(text, "LEAKED") || !strings.Contains(text, "refused") {
		t.Errorf("agent text %q: the model read the file the client refused\n%s", text, describe(h.client.snapshot()))
	}
	h.client.mu.Lock()
	reads := len(h.client.reads)
	h.client.mu.Unlock()
	if reads == 0 {
		t.Error("the client was never asked to read the file")
	}
}

package acp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
)

const generateScript = `
[[step]]
match.last_user_contains = "generate"
match.last_role = "user"
  [[step.tool_call]]
  id = "cmd1"
  name = "bash"
  arguments = '{"command":"echo a > a.gen && echo b > b.gen"}'

[[step]]
match.last_role = "tool"
text = ["generated"]
`

// TestKeepAndDiscardBySlashCommand: files a command changed are not
// committed; an ACP user is told to type /keep or /discard (not the LSP
// commands, which an ACP client cannot send: acpx showed "keep:
// loom.commit"), and those slash commands keep (commit) or discard them.
func TestKeepAndDiscardBySlashCommand(t *testing.T) {
	dir := repo(t, map[string]string{"notes.txt": "notes\n"})
	h := start(t, writeScript(t, generateScript), "", func(c *config.Config) { c.Tools.Bash = config.PolicyAllow })
	h.initialize(true, true)
	id := h.newSession(dir)
	h.mustPrompt(id, "generate files", acpsdk.StopReasonEndTurn)
	var all string
	for _, n := range h.client.snapshot() {
		if c := n.Update.AgentThoughtChunk; c != nil && c.Content.Text != nil {
			all += c.Content.Text.Text + "\n"
		}
	}
	if !strings.Contains(all, "/keep a.gen") || !strings.Contains(all, "/discard b.gen") || strings.Contains(all, "loom.commit") || strings.Contains(all, "loom.discard") {
		t.Fatalf("the command's changes do not say how to keep them in ACP:\n%s", all)
	}
	h.client.await(t, "the slash commands", func(ns []acpsdk.SessionNotification) bool {
		return strings.Contains(describe(ns), "/keep /discard")
	})
	answer := func(prompt string) string {
		t.Helper()
		n := len(h.client.snapshot())
		h.mustPrompt(id, prompt, acpsdk.StopReasonEndTurn)
		return agentText(h.client.snapshot()[n:])
	}
	if a := answer("/keep"); !strings.Contains(a, "usage: /keep FILE") || !strings.Contains(a, "a.gen, b.gen") {
		t.Errorf("/keep alone answered %q", a)
	}
	answer("/keep a.gen")
	out, err := exec.Command("git", "-C", dir, "show", "--name-only", "--format=", "HEAD").Output()
	if err != nil || strings.TrimSpace(string(out)) != "a.gen" {
		t.Errorf("after /keep a.gen the last commit holds %q (%v)", out, err)
	}
	answer("/discard b.gen")
	if _, err := os.Stat(filepath.Join(dir, "b.gen")); !os.IsNotExist(err) {
		t.Errorf("after /discard b.gen the file is still there (%v)", err)
	}
	if a := answer("/discard b.gen"); !strings.Contains(a, "No command changed a file") {
		t.Errorf("a second /discard answered %q", a)
	}
}

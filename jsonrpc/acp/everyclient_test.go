package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/internal/gittest"
)

// reviewNewFileScript writes a new file, then answers with what the tool
// said.
const reviewNewFileScript = `
[[step]]
match.last_user_contains = "make hello"
match.last_role = "user"
  [[step.tool_call]]
  id = "new1"
  name = "write_file"
  arguments = '{"path":"hello.txt","content":"hello\n"}'

[[step]]
match.last_role = "tool"
text = ["done"]
`

// Accepting a reviewed change that creates a file writes it: the
// client's "not found" answer to the read after Accept (every client
// answers a missing file with an error) is not fatal. While the review
// waits, the edit's tool call is pending, not in_progress.
func TestReviewedNewFileIsWritten(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	h := start(t, writeScript(t, reviewNewFileScript), "", reviewTweak)
	h.initialize(true, true)
	h.client.permit = permitWith(optionAccept)
	id := h.newSession(dir)
	h.mustPrompt(id, "please make hello.txt", acpsdk.StopReasonEndTurn)
	path := filepath.Join(dir, "hello.txt")
	if got, err := os.ReadFile(path); err != nil || string(got) != "hello\n" {
		t.Fatalf("hello.txt: %q, %v", got, err)
	}
	var final acpsdk.ToolCallStatus
	for _, n := range h.client.snapshot() {
		if u := n.Update.ToolCallUpdate; u != nil && u.ToolCallId == "new1" && u.Status != nil {
			final = *u.Status
		}
	}
	if final != acpsdk.ToolCallStatusCompleted {
		t.Errorf("the new file's tool call ended %q, want completed:\n%s", final, describe(h.client.snapshot()))
	}
	// In wire order: the call is pending when the permission is asked.
	last := ""
	for _, ev := range h.client.eventLog() {
		if ev.Kind == "permission" && ev.CallID == "new1" {
			break
		}
		if ev.CallID == "new1" && ev.Status != "" {
			last = ev.Status
		}
	}
	if last != string(acpsdk.ToolCallStatusPending) {
		t.Errorf("while the review waited the call was %q, want pending", last)
	}
	if log := gitLog(t, dir); !strings.Contains(log, "hello.txt") {
		t.Errorf("the accepted new file was not committed: %s", log)
	}
}

func gitLog(t *testing.T, dir string) string {
	t.Helper()
	return gittest.Run(t, dir, "log", "--stat", "--format=%s")
}

// available_commands_update goes out after the response that names the
// session (session/new), and after session/resume's and session/load's
// responses: Zed drops an update for a session it does not know yet.
func TestCommandsAfterTheSessionResponse(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	stateDir := t.TempDir()
	h := start(t, writeScript(t, "[[step]]\ntext = [\"Hello.\"]\n"), stateDir, nil)
	h.initialize(true, true)
	start := len(h.client.eventLog())
	id := h.newSession(dir)
	h.client.await(t, "the commands", func(ns []acpsdk.SessionNotification) bool {
		return strings.Contains(describe(ns), "commands /checkpoints")
	})
	firstOf := func(from int, sid acpsdk.SessionId) string {
		for _, ev := range h.client.eventLog()[from:] {
			if (ev.Kind == "commands" && ev.Session == sid) || ev.Kind == "response" {
				return ev.Kind + ":" + string(ev.Session)
			}
		}
		return ""
	}
	if got := firstOf(start, id); got != "response:"+string(id) {
		t.Fatalf("first of the session/new response and the commands: %s, want the response", got)
	}
	h.mustPrompt(id, "hi", acpsdk.StopReasonEndTurn)
	for _, method := range []string{"resume", "load"} {
		from := len(h.client.eventLog())
		n := len(h.client.snapshot())
		ctx := testCtx(t)
		var err error
		if method == "resume" {
			_, err = h.conn.ResumeSession(ctx, acpsdk.ResumeSessionRequest{SessionId: id, Cwd: dir})
		} else {
			_, err = h.conn.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: id, Cwd: dir, McpServers: []acpsdk.McpServer{}})
		}
		if err != nil {
			t.Fatalf("session/%s: %v", method, err)
		}
		h.client.await(t, "the commands again", func(ns []acpsdk.SessionNotification) bool {
			return strings.Contains(describe(ns[n:]), "commands /checkpoints")
		})
		if got := firstOf(from, id); got != "response:" {
			t.Errorf("session/%s: first of its response and the commands: %s, want the response", method, got)
		}
	}
}

// The notice about a folder's held-back settings reaches the session
// once, not once from the folder and once more at the first prompt.
func TestTrustNoticeOnce(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	script := writeScript(t, "[[step]]\nrepeat = true\ntext = [\"Hello.\"]\n")
	dir := repo(t, map[string]string{"a.txt": "a\n", ".loom.toml": "[tools]\nbash = \"allow\"\n"})
	h := startWith(t, "", func(folder string, overrides []config.Override) (config.Config, error) {
		cfg, _, err := config.Load(config.LoadOptions{UserFile: filepath.Join(xdg, "none.toml"), Folder: folder,
			Overrides: append([]config.Override{{Name: "test", JSON: []byte(`{"model":{"provider":"script","script":` + quote(script) + `,"name":"scripted"}}`)}}, overrides...)})
		return cfg, err
	})
	h.initialize(true, true)
	id := h.newSession(dir)
	h.mustPrompt(id, "hi", acpsdk.StopReasonEndTurn)
	h.mustPrompt(id, "again", acpsdk.StopReasonEndTurn)
	if n := strings.Count(agentText(h.client.snapshot()), "type /trust"); n != 1 {
		t.Errorf("the trust notice came %d times, want once:\n%s", n, agentText(h.client.snapshot()))
	}
}

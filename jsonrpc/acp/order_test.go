package acp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// manyToolsScript answers "many tools in X" with a batch that reads the
// file X.txt, reads shared.txt, edits X.txt, writes a new X-new.txt and
// reads it back, then "done".
func manyToolsScript(names ...string) string {
	var b strings.Builder
	for _, x := range names {
		fmt.Fprintf(&b, `
[[step]]
match.last_user_contains = "many tools in %[1]s"
match.last_role = "user"
repeat = true
  [[step.tool_call]]
  id = "%[1]s-read"
  name = "read_file"
  arguments = '{"path":"%[1]s.txt"}'
  [[step.tool_call]]
  id = "%[1]s-shared"
  name = "read_file"
  arguments = '{"path":"shared.txt"}'
  [[step.tool_call]]
  id = "%[1]s-edit"
  name = "edit_file"
  arguments = '{"path":"%[1]s.txt","old_string":"%[1]s","new_string":"%[1]s edited"}'
  [[step.tool_call]]
  id = "%[1]s-write"
  name = "write_file"
  arguments = '{"path":"%[1]s-new.txt","content":"new %[1]s\n"}'
  [[step.tool_call]]
  id = "%[1]s-reread"
  name = "read_file"
  arguments = '{"path":"%[1]s-new.txt"}'
`, x)
	}
	b.WriteString(`
[[step]]
match.last_role = "tool"
repeat = true
text = ["done"]
`)
	return b.String()
}

// explainedRequests checks that each file request (fs/read_text_file,
// fs/write_text_file) in log came while a tool call of the same session
// about that file was announced and in progress (a tool_call, then
// in_progress, not yet completed or failed). It returns the number of
// requests checked and what is wrong.
func explainedRequests(log []clientEvent) (int, []string) {
	type call struct {
		status string
		paths  []string
	}
	calls := map[string]*call{}
	var wrong []string
	n := 0
	for i, ev := range log {
		key := string(ev.Session) + "/" + ev.CallID
		switch ev.Kind {
		case "tool_call":
			calls[key] = &call{status: ev.Status, paths: ev.Paths}
		case "tool_call_update":
			c := calls[key]
			if c == nil {
				wrong = append(wrong, fmt.Sprintf("event %d: tool_call_update of %s before its tool_call", i, key))
				continue
			}
			if ev.Status != "" {
				c.status = ev.Status
			}
			c.paths = append(c.paths, ev.Paths...)
		case "read", "write":
			n++
			explained := false
			for k, c := range calls {
				if strings.HasPrefix(k, string(ev.Session)+"/") && c.status == "in_progress" && slices.Contains(c.paths, ev.Paths[0]) {
					explained = true
				}
			}
			if !explained {
				wrong = append(wrong, fmt.Sprintf("event %d: %s of %s in session %s, with no tool call of that session about it in progress", i, ev.Kind, ev.Paths[0], ev.Session))
			}
		}
	}
	return n, wrong
}

// TestFileRequestsFollowTheirToolCall: every fs/read_text_file and
// fs/write_text_file reaches the client after the tool_call that causes
// it, and after its in_progress, in the session of that call — for every
// tool of a multi-tool turn (parallel reads, an edit, a write, a read
// back), with two sessions of one folder running such turns at once.
func TestFileRequestsFollowTheirToolCall(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "shared.txt": "shared\n"})
	h := start(t, writeScript(t, manyToolsScript("a", "b")), "", nil)
	h.initialize(true, true)
	ids := map[string]acpsdk.SessionId{"a": h.newSession(dir), "b": h.newSession(dir)}
	var wg sync.WaitGroup
	for x, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, err := h.prompt(id, "many tools in "+x); err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
				t.Errorf("prompt %s: %v %v", x, resp.StopReason, err)
			}
		}()
	}
	wg.Wait()
	log := h.client.eventLog()
	n, wrong := explainedRequests(log)
	// Per session: its file, shared.txt, its file again for the edit,
	// the new file read back; two writes.
	if n < 12 {
		t.Errorf("only %d file requests reached the client; the test checks nothing", n)
	}
	for _, w := range wrong {
		t.Error(w)
	}
	for x := range ids {
		if b, _ := os.ReadFile(filepath.Join(dir, x+".txt")); string(b) != x+" edited\n" {
			t.Errorf("%s.txt = %q", x, b)
		}
	}
	if t.Failed() {
		for i, ev := range log {
			t.Logf("%3d %s %s %s %s %v", i, ev.Session, ev.Kind, ev.CallID, ev.Status, ev.Paths)
		}
	}
}

// statusesOf lists the statuses a tool call was shown with, in wire
// order, and whether a permission request for it came, as "?".
func statusesOf(log []clientEvent, id string) []string {
	var out []string
	for _, ev := range log {
		if ev.CallID != id {
			continue
		}
		switch {
		case ev.Kind == "permission":
			out = append(out, "?")
		case ev.Status != "":
			out = append(out, ev.Status)
		}
	}
	return out
}

// TestPendingWhileAwaitingPermission: a command waiting for the user's
// approval is shown pending, not running; in_progress once allowed, then
// completed. Denied, it goes from pending to failed without running.
func TestPendingWhileAwaitingPermission(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	h := start(t, writeScript(t, bashScript), "", nil)
	h.initialize(true, true)
	id := h.newSession(dir)
	for _, tc := range []struct {
		option string
		want   []string
	}{
		{optionAllowOnce, []string{"pending", "?", "in_progress", "completed"}},
		{optionRejectOnce, []string{"pending", "?", "failed"}},
	} {
		var atPermission []string
		allow := permitWith(tc.option)
		from := len(h.client.eventLog())
		h.client.permit = func(ctx context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
			atPermission = statusesOf(h.client.eventLog()[from:], string(p.ToolCall.ToolCallId))
			return allow(ctx, p)
		}
		h.mustPrompt(id, "make marker", acpsdk.StopReasonEndTurn)
		log := h.client.eventLog()[from:]
		var call string
		for _, ev := range log {
			if ev.Kind == "permission" {
				call = ev.CallID
			}
		}
		if got := statusesOf(log, call); !slices.Equal(got, tc.want) {
			t.Errorf("%s: the call was shown %v, want %v", tc.option, got, tc.want)
		}
		if !slices.Equal(atPermission, []string{"pending", "?"}) {
			t.Errorf("%s: while the user was asked, the call was shown %v, want only pending", tc.option, atPermission)
		}
	}
}

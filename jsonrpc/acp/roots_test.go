package acp

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// rootsScript: asked to read the shared folder, the model reads a file
// there by absolute path, then tries to write it (refused), then says
// what it got; asked again (after a load without the folder), its read
// is refused.
const rootsScript = `
[[step]]
match.last_user_contains = "read the shared folder"
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":%[1]q}'

[[step]]
match.last_tool_result_contains = "shared readme"
  [[step.tool_call]]
  id = "w1"
  name = "write_file"
  arguments = '{"path":%[1]q,"content":"mine\n"}'

[[step]]
match.last_tool_result_contains = "write_file: path is outside the workspace root"
text = ["Read it; writing there is refused."]

[[step]]
match.last_user_contains = "again"
  [[step.tool_call]]
  id = "r2"
  name = "read_file"
  arguments = '{"path":%[1]q}'

[[step]]
match.last_tool_result_contains = "read_file: path is outside the workspace root"
text = ["Could not read it."]
`

// TestAdditionalDirectories: the agent advertises
// sessionCapabilities.additionalDirectories; a session made with a
// shared folder as an additional directory reads it by absolute path and
// cannot write it; session/list reports the roots (and filters on them);
// session/load without them activates none (the read is refused); a
// relative, missing or secret directory fails session/new with
// invalid_params.
func TestAdditionalDirectories(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, shared := filepath.Join(base, "home"), filepath.Join(base, "shared")
	for _, f := range []string{filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(shared, "README")} {
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, []byte("shared readme\n"), 0o644)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	target := filepath.Join(shared, "README")
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	h := start(t, writeScript(t, fmt.Sprintf(rootsScript, target)), "", nil)
	init := h.initialize(true, true)
	if init.AgentCapabilities.SessionCapabilities.AdditionalDirectories == nil {
		t.Fatal("sessionCapabilities.additionalDirectories is not advertised")
	}
	ctx := testCtx(t)
	for _, bad := range []string{"shared", filepath.Join(base, "missing"), filepath.Join(home, ".ssh")} {
		_, err := h.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}, AdditionalDirectories: []string{bad}})
		if err == nil || !strings.Contains(err.Error(), "additionalDirectories") {
			t.Errorf("session/new with %q: %v, want invalid params naming additionalDirectories", bad, err)
		}
	}
	resp, err := h.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}, AdditionalDirectories: []string{shared}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.SessionId
	h.mustPrompt(id, "read the shared folder", acpsdk.StopReasonEndTurn)
	if text := agentText(h.client.snapshot()); !strings.Contains(text, "Read it; writing there is refused.") {
		t.Fatalf("agent text %q\n%s", text, describe(h.client.snapshot()))
	}
	if data, _ := os.ReadFile(target); string(data) != "shared readme\n" {
		t.Fatalf("the additional directory was written: %q", data)
	}
	list, err := h.conn.ListSessions(ctx, acpsdk.ListSessionsRequest{Cwd: acpsdk.Ptr(dir)})
	if err != nil || len(list.Sessions) != 1 || !slices.Equal(list.Sessions[0].AdditionalDirectories, []string{shared}) {
		t.Fatalf("session/list = %+v, %v", list, err)
	}
	if list, _ := h.conn.ListSessions(ctx, acpsdk.ListSessionsRequest{Cwd: acpsdk.Ptr(dir), AdditionalDirectories: []string{home}}); len(list.Sessions) != 0 {
		t.Errorf("the additionalDirectories filter let through %+v", list.Sessions)
	}
	if _, err := h.conn.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: id, Cwd: dir, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	h.mustPrompt(id, "read the shared folder again", acpsdk.StopReasonEndTurn)
	if text := agentText(h.client.snapshot()); !strings.Contains(text, "Could not read it.") {
		t.Fatalf("after a load without additionalDirectories the read was not refused: %q", text)
	}
	if list, _ := h.conn.ListSessions(ctx, acpsdk.ListSessionsRequest{Cwd: acpsdk.Ptr(dir)}); len(list.Sessions) != 1 || len(list.Sessions[0].AdditionalDirectories) != 0 {
		t.Errorf("session/list after the load: %+v", list.Sessions)
	}
}

// session/list results carry "additionalDirectories":[] for a session
// without any (the SDK's field is omitempty); other messages pass as
// they are.
func TestListRootsAddsEmptyList(t *testing.T) {
	var b bytes.Buffer
	w := &capsWriter{out: &b}
	msg := `{"jsonrpc":"2.0","id":3,"result":{"sessions":[{"sessionId":"a","cwd":"/w"},{"sessionId":"b","cwd":"/w","additionalDirectories":["/x"]}]}}` + "\n"
	if n, err := w.Write([]byte(msg)); err != nil || n != len(msg) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	out := b.String()
	if !strings.Contains(out, `"additionalDirectories":[],"cwd":"/w","sessionId":"a"`) || !strings.Contains(out, `"additionalDirectories":["/x"]`) || !strings.HasSuffix(out, "}\n") {
		t.Fatalf("session/list result became %s", out)
	}
	b.Reset()
	other := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"a","update":{"sessions":[{"sessionId":"x"}]}}}` + "\n"
	w.Write([]byte(other))
	if b.String() != other {
		t.Fatalf("a notification was changed: %s", b.String())
	}
}

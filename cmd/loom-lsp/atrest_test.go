package main

import (
	"context"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// An API key pasted into the first prompt is never shown as the
// conversation's title: not by exec --list (table and JSONL), nor by
// ACP's session/list, in processes that know the key from the
// environment (any *_API_KEY variable).
func TestKeyAsTitleIsMasked(t *testing.T) {
	const key = "sk-title-0123456789abcdef"
	dir := testRepo(t)
	env := append(isolatedEnv(t), "LOOM_TEST_API_KEY="+key)
	script := writeScript(t, pacedScript)
	if r := runLoomEnv(t, env, dir, "", "exec", "--script", script, "here is my key "+key+" for the deploy"); r.code != 0 {
		t.Fatalf("exec: exit %d\n%s", r.code, r.stderr)
	}
	list := listOf(t, env, dir)
	if len(list) != 1 || strings.Contains(list[0].Title, key) || !strings.Contains(list[0].Title, "[REDACTED]") {
		t.Errorf("exec --list --output jsonl: %+v", list)
	}
	if table := runLoomEnv(t, env, dir, "", "exec", "--list"); table.code != 0 || strings.Contains(table.stdout, key) || !strings.Contains(table.stdout, "[REDACTED]") {
		t.Errorf("exec --list: exit %d\n%s", table.code, table.stdout)
	}

	p := startACP(t, dir, env, "--script", script)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.initialize(t, ctx)
	sessions, err := p.conn.ListSessions(ctx, acpsdk.ListSessionsRequest{Cwd: acpsdk.Ptr(dir)})
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].Title == nil || strings.Contains(*sessions.Sessions[0].Title, key) ||
		!strings.Contains(*sessions.Sessions[0].Title, "[REDACTED]") {
		t.Errorf("session/list: %+v", sessions.Sessions)
	}
	if code := p.closeStdin(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

package main

import (
	"strings"
	"testing"
)

// TestExecHookNoticesSayHowAndTimeout: an untrusted folder's hooks are
// named with how to trust it in exec's own words (loom-lsp trust); a
// PreToolUse hook killed at its timeout is reported to the user as timed
// out, and the model reads that it decided nothing.
func TestExecHookNoticesSayHowAndTimeout(t *testing.T) {
	settings := `{"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "sleep 30", "timeout": 1}]}]}}`
	script := `
[[step]]
match.last_role = "user"
text = ["Reading."]
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"greet.txt"}'

[[step]]
match.last_tool_result_contains = "timed out after 1s"
text = ["The hook timed out."]

[[step]]
match.last_role = "tool"
text = ["Read."]
`
	dir, env := newHookRepo(t, map[string]string{"greet.txt": "hello\n", ".claude/settings.json": settings}, false)
	r := runLoomEnv(t, env, dir, "", "exec", "--script", writeScript(t, script), "read")
	if out := r.stdout + r.stderr; !strings.Contains(out, "the folder is not trusted; to run it, trust the folder: run `loom-lsp trust` in this folder") {
		t.Fatalf("untrusted:\n%s", out)
	}
	if r := runLoomEnv(t, env, dir, "", "trust"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r = runLoomEnv(t, env, dir, "", "exec", "--script", writeScript(t, script), "read")
	out := r.stdout + r.stderr
	if !strings.Contains(out, "timed out after 1s") || !strings.Contains(r.stdout, "The hook timed out.") {
		t.Fatalf("timed out:\n%s", out)
	}
}

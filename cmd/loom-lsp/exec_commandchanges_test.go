package main

import (
	"strings"
	"testing"
)

// genScript runs a command that changes greet.txt and makes gen.txt.
const genScript = `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  id = "b1"
  name = "bash"
  arguments = '{"command":"echo gen > gen.txt && echo changed > greet.txt"}'

[[step]]
match.last_tool_result_contains = "loom does not commit what commands change"
text = ["Done."]
`

// exec: a command's changes are never committed; the JSONL output has a
// command_changes event (valid against the schema) with each file's
// diff, the model reads them in the command's result, and the text
// output says them.
func TestExecReportsCommandChangesNotCommitted(t *testing.T) {
	dir := testRepo(t)
	head := gitT(t, dir, "rev-parse", "HEAD")
	r := runLoom(t, dir, "", "exec", "--output", "jsonl", "--approve", "bash=allow", "--script", writeScript(t, genScript), "generate")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var changes []any
	for _, ev := range validEvents(t, eventSchema(t), r.stdout) {
		switch ev["type"] {
		case "commit":
			t.Fatalf("a command's change was committed: %v", ev)
		case "command_changes":
			changes = ev["changes"].([]any)
		}
	}
	if len(changes) != 2 {
		t.Fatalf("command_changes %v\nstdout:\n%s", changes, r.stdout)
	}
	gen := changes[0].(map[string]any)
	greet := changes[1].(map[string]any)
	if gen["rel"] != "gen.txt" || gen["created"] != true || !strings.Contains(gen["diff"].(string), "+gen") ||
		greet["rel"] != "greet.txt" || !strings.Contains(greet["diff"].(string), "-hello\n+changed") {
		t.Fatalf("command_changes %v", changes)
	}
	if now := gitT(t, dir, "rev-parse", "HEAD"); now != head {
		t.Fatal("HEAD moved")
	}
	// The text output, from a clean worktree again (a command that writes
	// what the file already holds changes nothing, and is not reported).
	gitT(t, dir, "checkout", "--", "greet.txt")
	gitT(t, dir, "clean", "-fq", "--", "gen.txt")
	r = runLoom(t, dir, "", "exec", "--approve", "bash=allow", "--script", writeScript(t, genScript), "generate")
	if r.code != 0 || !strings.Contains(r.stderr+r.stdout, "changed by `echo gen > gen.txt && echo changed > greet.txt` — not committed: greet.txt") {
		t.Fatalf("text output:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
}

package main

import (
	"strings"
	"testing"
)

// subagentScript: the parent hands two read-only researchers a file
// each; each reads its file and answers; the parent sums up.
var subagentScript = `
[[step]]
match.last_user_contains = "survey the repository"
  [[step.tool_call]]
  id = "r1"
  name = "agent"
  arguments = '{"agent":"researcher","task":"report on greet.txt"}'
  [[step.tool_call]]
  id = "r2"
  name = "agent"
  arguments = '{"agent":"researcher","task":"report on go.mod"}'

[[step]]
match.last_user_contains = "report on greet.txt"
  [[step.tool_call]]
  id = "c1"
  name = "read_file"
  arguments = '{"path":"greet.txt"}'

[[step]]
match.last_user_contains = "report on go.mod"
  [[step.tool_call]]
  id = "c2"
  name = "read_file"
  arguments = '{"path":"greet.txt"}'

[[step]]
match.last_tool_result_contains = "hello"
repeat = true
text = ["the file greets"]
usage = { prompt = 40, completion = 5 }

[[step]]
match.last_role = "tool"
text = ["Both researchers reported."]
`

// exec runs two read-only children and says so in JSONL: each child's
// start, its tool calls and its end, with the parent's call id, valid
// against the schema; the parent's model reads each child's answer.
func TestExecSubagents(t *testing.T) {
	schema := eventSchema(t)
	dir := testRepo(t)
	r := runLoom(t, dir, "", "exec", "--output", "jsonl", "--script", writeScript(t, subagentScript), "survey the repository")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	events := validEvents(t, schema, r.stdout)
	started, completed := ofType(events, "subagent_started"), ofType(events, "subagent_completed")
	if len(started) != 2 || len(completed) != 2 {
		t.Fatalf("%d subagent_started, %d subagent_completed:\n%s", len(started), len(completed), r.stdout)
	}
	ids := map[any]bool{}
	for _, ev := range completed {
		sub := ev["subagent"].(map[string]any)
		if sub["state"] != "completed" || sub["agent"] != "researcher" || sub["readOnly"] != true {
			t.Errorf("subagent_completed %v", ev)
		}
		ids[ev["id"]] = true
	}
	if !ids["r1"] || !ids["r2"] {
		t.Errorf("the children's parent calls: %v", ids)
	}
	if ups := ofType(events, "subagent_update"); len(ups) == 0 || ups[0]["name"] != "read_file" {
		t.Errorf("subagent_update events %v", ups)
	}
	answered := 0
	for _, ev := range ofType(events, "tool_completed") {
		if ev["name"] == "agent" && ev["status"] == "succeeded" && strings.Contains(*strOf(ev["output"]), "the file greets") {
			answered++
		}
	}
	if answered != 2 {
		t.Fatalf("%d agent calls answered with the child's answer:\n%s", answered, r.stdout)
	}
	// The children's turns are theirs: the parent has one turn.
	if turns := ofType(events, "turn_completed"); len(turns) != 1 || !strings.Contains(r.stdout, "Both researchers reported.") {
		t.Fatalf("turn_completed %v\n%s", turns, r.stdout)
	}
}

func strOf(v any) *string {
	s, _ := v.(string)
	return &s
}

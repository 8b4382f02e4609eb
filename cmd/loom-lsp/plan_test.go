package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planScript plans in plan mode: it keeps a todo list and tries an edit
// (refused: it reads why), then proposes a plan; once the plan is
// accepted it reads and edits greet.txt and ticks the list.
var planScript = `
[[step]]
match.last_user_contains = "greet the world"
  [[step.tool_call]]
  id = "u1"
  name = "update_plan"
  arguments = '{"plan":[{"step":"look at greet.txt","status":"in_progress"},{"step":"greet the world","status":"pending"}]}'
  [[step.tool_call]]
  id = "e0"
  name = "edit_file"
  arguments = '{"path":"greet.txt","old_string":"hello","new_string":"hi"}'

[[step]]
match.last_tool_result_contains = "edit_file is refused in plan mode"
  [[step.tool_call]]
  id = "p1"
  name = "propose_plan"
  arguments = '{"plan":"1. change hello to hello, world in greet.txt"}'

[[step]]
match.last_tool_result_contains = "accepted the plan"
` + readEditGreet + `
  [[step.tool_call]]
  id = "u2"
  name = "update_plan"
  arguments = '{"plan":[{"step":"look at greet.txt","status":"completed"},{"step":"greet the world","status":"completed"}]}'

[[step]]
match.last_tool_result_contains = "plan updated"
text = ["Done."]
`

func TestExecPlanModeStopsWithThePlan(t *testing.T) {
	schema := eventSchema(t)
	dir := testRepo(t)
	r := runLoom(t, dir, "", "exec", "--output", "jsonl", "--mode", "plan", "--script", writeScript(t, planScript), "greet the world")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	events := validEvents(t, schema, r.stdout)
	if modes := ofType(events, "mode"); len(modes) != 1 || modes[0]["mode"] != "plan" {
		t.Fatalf("mode events %v", modes)
	}
	plans := ofType(events, "plan")
	if len(plans) != 1 || len(plans[0]["plan"].([]any)) != 2 {
		t.Fatalf("plan events %v", plans)
	}
	proposed := ofType(events, "plan_proposed")
	if len(proposed) != 1 || !strings.Contains(proposed[0]["text"].(string), "hello, world") {
		t.Fatalf("plan_proposed events %v", proposed)
	}
	refused := false
	for _, ev := range ofType(events, "tool_completed") {
		if ev["name"] == "edit_file" && ev["status"] == "failed" && strings.Contains(ev["summary"].(string), "refused in plan mode") {
			refused = true
		}
	}
	if !refused {
		t.Fatalf("no refused edit_file in\n%s", r.stdout)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "hello\n" {
		t.Fatalf("greet.txt in plan mode = %q", got)
	}
}

func TestExecPlanAcceptedCarriesItOut(t *testing.T) {
	dir := testRepo(t)
	r := runLoom(t, dir, "", "exec", "--mode", "plan", "--plan", "accept", "--script", writeScript(t, planScript), "greet the world")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "hello, world\n" {
		t.Fatalf("greet.txt after the accepted plan = %q\nstderr:\n%s", got, r.stderr)
	}
	// Text mode: the plan goes to stdout; the mode and the list are
	// compact lines on stderr.
	for _, want := range []string{"◇ mode: plan", "☰ plan: 0/2 ▸ look at greet.txt · ○ greet the world", "◇ mode: agent", "☰ plan: 2/2 ✓ look at greet.txt · ✓ greet the world"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "1. change hello to hello, world in greet.txt") || !strings.Contains(r.stdout, "Done.") {
		t.Fatalf("stdout:\n%s", r.stdout)
	}
	if r := runLoom(t, dir, "", "exec", "--mode", "chat", "hi"); r.code == 0 || !strings.Contains(r.stderr, "--mode is agent, plan or ask") {
		t.Fatalf("--mode chat: exit %d, %s", r.code, r.stderr)
	}
}

// exec --image: a picture for a model that takes them is stored by hash
// in the state directory and the turn runs; for one that does not, exec
// refuses before anything is sent, saying how to allow it.
func TestExecImage(t *testing.T) {
	dir := testRepo(t)
	pixel := filepath.Join(t.TempDir(), "pixel.png")
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	if err := os.WriteFile(pixel, png, 0o644); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, "[[step]]\nmatch.last_user_contains = \"what is it\"\ntext = [\"A pixel.\"]\n")
	r := runLoom(t, dir, "", "exec", "--script", script, "--image", pixel, "what is it?")
	if r.code == 0 || !strings.Contains(r.stderr, "not known to take pictures") || !strings.Contains(r.stderr, "model.images") {
		t.Fatalf("an image for a model without pictures: exit %d\n%s", r.code, r.stderr)
	}
	env := isolatedEnv(t)
	cfg := writeFile(t, t.TempDir(), "loom.toml", "[model]\nimages = \"on\"\n")
	r = runLoomEnv(t, env, dir, "", "exec", "--config", cfg, "--script", script, "--image", pixel, "what is it?")
	if r.code != 0 || !strings.Contains(r.stdout, "A pixel.") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var state string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	if stored, _ := filepath.Glob(filepath.Join(state, "loom", "images", "*.png")); len(stored) != 1 {
		t.Fatalf("stored pictures under %s: %v", state, stored)
	}
}

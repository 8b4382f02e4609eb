package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// proposeScript edits greet.txt, then ends once the tool answered.
const proposeScript = `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"greet.txt"}'

[[step]]
match.last_tool_result_contains = "hello"
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"greet.txt","old_string":"hello","new_string":"hello, world"}'

[[step]]
match.last_role = "tool"
text = ["Done."]
`

// TestExecProposeWritesNothing: exec --edits propose is a dry run: the
// change comes out as a proposed_change event (valid against the
// published schema) whose diff git apply takes, nothing is written or
// committed, the model is told, and exec exits 0.
func TestExecProposeWritesNothing(t *testing.T) {
	dir := testRepo(t)
	head := gitT(t, dir, "rev-parse", "HEAD")
	r := runLoom(t, dir, "", "exec", "--output", "jsonl", "--edits", "propose", "--script", writeScript(t, proposeScript), "greet the world")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	events := validEvents(t, eventSchema(t), r.stdout)
	props := ofType(events, "proposed_change")
	if len(props) != 1 || props[0]["path"] != "greet.txt" || props[0]["kind"] != "edit" {
		t.Fatalf("proposed_change events: %v", props)
	}
	diff := props[0]["diff"].(string)
	if !strings.Contains(diff, "-hello\n+hello, world\n") {
		t.Fatalf("diff:\n%s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(b) != "hello\n" {
		t.Fatalf("greet.txt = %q: a dry run wrote it", b)
	}
	if got := gitT(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatalf("a dry run committed")
	}
	for _, tc := range ofType(events, "tool_completed") {
		if tc["name"] == "edit_file" && (tc["status"] != "failed" || !strings.Contains(tc["summary"].(string), "dry run")) {
			t.Fatalf("edit_file completed as %v", tc)
		}
	}
	// The diff is a patch git applies.
	patch := filepath.Join(t.TempDir(), "p.diff")
	if err := os.WriteFile(patch, []byte(diff), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "apply", patch)
	if b, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(b) != "hello, world\n" {
		t.Fatalf("after git apply: %q", b)
	}
	// --edits review makes no sense headless.
	if r := runLoom(t, dir, "", "exec", "--edits", "review", "--script", writeScript(t, proposeScript), "x"); r.code != exitUsage || !strings.Contains(r.stderr, "--edits propose") {
		t.Fatalf("--edits review: exit %d %s", r.code, r.stderr)
	}
}

// TestExecRewind: a turn edits and commits greet.txt; exec --rewind 1
// takes it back (one commit "loom: rewind to turn 1") and the
// conversation with it, then runs the new prompt as turn 2.
func TestExecRewind(t *testing.T) {
	dir := testRepo(t)
	env := isolatedEnv(t)
	script := writeScript(t, proposeScript)
	if r := runLoomEnv(t, env, dir, "", "exec", "--script", script, "greet the world"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(b) != "hello, world\n" {
		t.Fatalf("the turn did not edit: %q", b)
	}
	r := runLoomEnv(t, env, dir, "", "exec", "--rewind", "1", "--script", script)
	if r.code != 0 {
		t.Fatalf("--rewind: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "rewound the files and the conversation to before turn 1; restored greet.txt; that turn's prompt was: greet the world") {
		t.Fatalf("stderr: %s", r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(b) != "hello\n" {
		t.Fatalf("after --rewind 1: %q", b)
	}
	if s := strings.TrimSpace(gitT(t, dir, "log", "-1", "--format=%s")); s != "loom: rewind to turn 1" {
		t.Fatalf("HEAD %q", s)
	}
}

// TestExecRewindLeavesAnOverlappingFile: after the turn, the user changes
// the agent's own line of greet.txt; exec --rewind 1 --restore files
// leaves the file byte for byte as the user has it, makes no commit, and
// says which file it left and why.
func TestExecRewindLeavesAnOverlappingFile(t *testing.T) {
	dir := testRepo(t)
	env := isolatedEnv(t)
	script := writeScript(t, proposeScript)
	if r := runLoomEnv(t, env, dir, "", "exec", "--script", script, "greet the world"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	greet := filepath.Join(dir, "greet.txt")
	if err := os.WriteFile(greet, []byte("hello, world, and mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	head := gitT(t, dir, "rev-parse", "HEAD")
	r := runLoomEnv(t, env, dir, "", "exec", "--rewind", "1", "--restore", "files", "--script", script)
	if r.code != 0 {
		t.Fatalf("--rewind: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "left as they are: greet.txt (your changes to greet.txt since the commit overlap the agent's") {
		t.Fatalf("stderr: %s", r.stderr)
	}
	if b, _ := os.ReadFile(greet); string(b) != "hello, world, and mine\n" {
		t.Fatalf("greet.txt was touched: %q", b)
	}
	if now := gitT(t, dir, "rev-parse", "HEAD"); now != head {
		t.Fatal("a rewind that left every file made a commit")
	}
}

// TestExecProposeCommandChanges: a dry run (--edits propose) with a
// command: its change is printed as a proposed_change of kind command,
// then discarded, so the worktree is as before and nothing is committed.
func TestExecProposeCommandChanges(t *testing.T) {
	dir := testRepo(t)
	head := gitT(t, dir, "rev-parse", "HEAD")
	r := runLoom(t, dir, "", "exec", "--output", "jsonl", "--edits", "propose", "--approve", "bash=allow", "--script", writeScript(t, genScript), "generate")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var kinds []string
	for _, ev := range validEvents(t, eventSchema(t), r.stdout) {
		if ev["type"] == "proposed_change" {
			kinds = append(kinds, ev["kind"].(string)+" "+ev["path"].(string))
			if ev["path"] == "greet.txt" && !strings.Contains(ev["diff"].(string), "-hello\n+changed") {
				t.Fatalf("greet.txt diff %q", ev["diff"])
			}
		}
	}
	if strings.Join(kinds, ",") != "command gen.txt,command greet.txt" {
		t.Fatalf("proposed %q\nstdout:\n%s", kinds, r.stdout)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(b) != "hello\n" {
		t.Fatalf("greet.txt after a dry run: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "gen.txt")); !os.IsNotExist(err) {
		t.Fatalf("gen.txt left after a dry run: %v", err)
	}
	if now := gitT(t, dir, "rev-parse", "HEAD"); now != head {
		t.Fatal("HEAD moved")
	}
}

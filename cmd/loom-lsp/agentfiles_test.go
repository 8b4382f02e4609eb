package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
)

// claudeRepo is a repository configured for Claude Code: a skill and a
// custom command, read by loom unchanged.
func claudeRepo(t *testing.T) string {
	return gittest.Repo(t, map[string]string{
		"greet.txt": "hello\n",
		".claude/skills/house-style/SKILL.md": "---\nname: house-style\ndescription: How this team greets people. Use whenever greeting.\n---\n" +
			"HOUSE-STYLE-BODY: greet with 'Good day', never 'hello'. See templates/greeting.txt.\n",
		".claude/skills/house-style/templates/greeting.txt": "Good day, NAME.\n",
		".claude/commands/greet.md":                         "---\ndescription: Greet someone in the house style\nargument-hint: NAME\n---\nGreet $ARGUMENTS in the house style.\n",
	})
}

const skillSession = `
[[step]]
match.last_user_contains = "Greet the world in the house style."
  [[step.tool_call]]
  id = "s1"
  name = "skill"
  arguments = '{"name":"house-style"}'

[[step]]
match.last_tool_result_contains = "HOUSE-STYLE-BODY"
  [[step.tool_call]]
  id = "s2"
  name = "skill"
  arguments = '{"name":"house-style","file":"templates/greeting.txt"}'

[[step]]
match.last_tool_result_contains = "Good day, NAME."
text = ["Good day, world."]

[[step]]
match.last_user_contains = "Use the skill \"tidy\""
text = ["tidied as the user's skill says"]
`

// A repository configured for Claude Code works unchanged in loom exec:
// /greet expands the command, the model loads the skill by name and
// reads its bundled file; a user-level skill is a command too; an
// unknown /command is an error naming the known ones.
func TestExecSkillsAndCommands(t *testing.T) {
	dir := claudeRepo(t)
	env := isolatedEnv(t)
	home := t.TempDir()
	writeFile(t, mkdir(t, filepath.Join(home, ".agents/skills/tidy")), "SKILL.md", "---\nname: tidy\ndescription: Tidy a folder.\n---\nTIDY-BODY\n")
	env = append(env, "HOME="+home)
	script := writeScript(t, skillSession)
	r := runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--script", script, "/greet the world")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	events := validEvents(t, eventSchema(t), r.stdout)
	if ts := ofType(events, "turn_started"); len(ts) != 1 || ts[0]["prompt"] != "Greet the world in the house style." {
		t.Errorf("turn_started %v: want the expanded command", ts)
	}
	if m := ofType(events, "message_completed"); len(m) == 0 || m[len(m)-1]["text"] != "Good day, world." {
		t.Errorf("final message %v\n%s", m, r.stdout)
	}
	r = runLoomEnv(t, env, dir, "", "exec", "--script", script, "/tidy the notes")
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "tidied as the user's skill says") {
		t.Errorf("user skill as a command: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runLoomEnv(t, env, dir, "", "exec", "--script", script, "/nosuch thing")
	if r.code == 0 || !strings.Contains(r.stderr, "unknown command /nosuch; the commands are: /greet /house-style /tidy") {
		t.Errorf("unknown command: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

func mkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

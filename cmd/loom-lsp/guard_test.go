package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The attacks of issue 21 on loom's own configuration, run through the
// built binary as a user (or a script) runs it.

// TestExecAgentCannotWriteItsConfig: in a folder the user trusts, a
// prompt-injected model's write_file of .loom.toml (to allow commands)
// and of .vscode/settings.json is refused with a tool error it reads, and
// both files stay as they were.
func TestExecAgentCannotWriteItsConfig(t *testing.T) {
	dir := testRepo(t)
	env := isolatedEnv(t)
	cfgDir := filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "loom")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfgDir, "loom.toml", "[tools]\nbash = \"deny\"\n[trust]\nfolders = [\""+dir+"\"]\n")
	const mine = "[tools]\nbash = \"ask\"\n"
	writeFile(t, dir, ".loom.toml", mine)
	os.MkdirAll(filepath.Join(dir, ".vscode"), 0o755)
	writeFile(t, dir, ".vscode/settings.json", "{}\n")
	script := writeScript(t, `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  id = "w1"
  name = "write_file"
  arguments = '{"path":".loom.toml","content":"[tools]\nbash = \"allow\"\n"}'
  [[step.tool_call]]
  id = "w2"
  name = "write_file"
  arguments = '{"path":".vscode/settings.json","content":"{\"loom.tools.bash\": \"allow\"}\n"}'

[[step]]
match.last_tool_result_contains = "is loom's configuration: ask the user to change it"
text = ["Refused."]
`)
	r := runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--script", script, "follow the README")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{".loom.toml is loom's configuration", ".vscode/settings.json is loom's configuration", "Refused."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout does not say %q:\n%s", want, r.stdout)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ".loom.toml")); string(got) != mine {
		t.Errorf(".loom.toml is now %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ".vscode/settings.json")); string(got) != "{}\n" {
		t.Errorf(".vscode/settings.json is now %q", got)
	}
}

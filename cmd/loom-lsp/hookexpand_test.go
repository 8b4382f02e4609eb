package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// writeHookScript has the model rewrite the repository's hook script,
// then end the turn.
const writeHookScript = `
[[step]]
match.last_role = "user"
text = ["Reading the hook."]
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":".claude/hooks/hook.sh"}'

[[step]]
match.last_tool_result_contains = "exit 0"
text = ["Rewriting it."]
  [[step.tool_call]]
  id = "w1"
  name = "write_file"
  arguments = '{"path":".claude/hooks/hook.sh","content":"#!/bin/bash\ntouch \"$CLAUDE_PROJECT_DIR/pwned\"\n"}'

[[step]]
match.last_tool_result_contains = "hook.sh"
text = ["Done."]
`

// TestExecRewrittenHookScriptNamedThroughDefaultIsHeld: a trusted
// repository's PostToolUse hook names its script the way Claude Code's
// documentation does, ${CLAUDE_PROJECT_DIR:-.}/…; the agent rewrites the
// script with write_file (tools.bash = "ask"): the rewritten script is a
// changed hook, held back and said, never run unasked.
func TestExecRewrittenHookScriptNamedThroughDefaultIsHeld(t *testing.T) {
	for name, cmd := range map[string]string{
		"default":  `bash "${CLAUDE_PROJECT_DIR:-.}/.claude/hooks/hook.sh"`,
		"bare":     `bash ${CLAUDE_PROJECT_DIR:-.}/.claude/hooks/hook.sh`,
		"toplevel": `/usr/bin/env bash "$(git rev-parse --show-toplevel)/.claude/hooks/hook.sh"`,
		"cd":       `cd .claude/hooks && bash hook.sh`,
	} {
		t.Run(name, func(t *testing.T) {
			settings := `{"hooks": {"PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": ` + quoteJSON(cmd) + `}]}]}}`
			dir, env := newHookRepo(t, map[string]string{".claude/settings.json": settings, ".claude/hooks/hook.sh": "#!/bin/bash\nexit 0\n"}, true)
			if s := sandbox.New(sandbox.Policy{Root: dir}); !s.Active() {
				t.Skipf("no Landlock here (repository hooks do not run under \"ask\" without it): %s", s.Unavailable())
			}
			r := runLoomEnv(t, env, dir, "", "exec", "--script", writeScript(t, writeHookScript), "rewrite the hook")
			out := r.stdout + r.stderr
			if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
				t.Fatalf("the agent's rewritten hook script ran unasked:\n%s", out)
			}
			if !strings.Contains(out, "changed since you trusted the folder") || !strings.Contains(out, "Done.") {
				t.Fatalf("output:\n%s", out)
			}
		})
	}
}

// TestExecUnresolvedHookHeldUnderAsk: a repository hook whose command
// names its script through what loom cannot resolve without running
// something ($HOOKS, set nowhere loom knows) is held back under "ask",
// and says why; with commands allowed it runs.
func TestExecUnresolvedHookHeldUnderAsk(t *testing.T) {
	settings := `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "bash \"$(dirname .claude/hooks/x)/hook.sh\""}]}]}}`
	dir, env := newHookRepo(t, map[string]string{".claude/settings.json": settings, ".claude/hooks/hook.sh": "#!/bin/bash\necho 'House rule: be brief.'\n"}, true)
	if s := sandbox.New(sandbox.Policy{Root: dir}); !s.Active() {
		t.Skipf("no Landlock here: %s", s.Unavailable())
	}
	script := writeScript(t, "[[step]]\nmatch.last_user_contains = \"House rule\"\ntext = [\"Ruled.\"]\n\n[[step]]\ntext = [\"Plain.\"]\n")
	r := runLoomEnv(t, env, dir, "", "exec", "--script", script, "hello")
	out := r.stdout + r.stderr
	if !strings.Contains(out, "cannot resolve to files") || !strings.Contains(out, "$(dirname .claude/hooks/x)") || !strings.Contains(out, "Plain.") {
		t.Fatalf("under ask:\n%s", out)
	}
	r = runLoomEnv(t, env, dir, "", "exec", "--approve", "bash=allow", "--script", script, "hello")
	if out := r.stdout + r.stderr; !strings.Contains(out, "Ruled.") {
		t.Fatalf("with commands allowed:\n%s", out)
	}
}

func quoteJSON(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

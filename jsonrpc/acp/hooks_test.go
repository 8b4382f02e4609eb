package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
)

// TestHooksInACP: a trusted repository's Claude Code PreToolUse hook
// blocks rm -rf in an ACP session: the command does not run, the model
// reads the reason, and the client shows the hook's line.
func TestHooksInACP(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	settings := `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}`
	guard := "#!/bin/bash\ncase \"$(cat)\" in *'rm -rf'*) echo 'rm -rf is not allowed here' >&2; exit 2;; esac\n"
	dir := repo(t, map[string]string{".claude/settings.json": settings, "guard.sh": guard, "build/out.o": "x"})
	os.Chmod(filepath.Join(dir, "guard.sh"), 0o755)
	script := writeScript(t, `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  id = "b1"
  name = "bash"
  arguments = '{"command":"rm -rf build"}'

[[step]]
match.last_tool_result_contains = "rm -rf is not allowed here"
delay = "500ms"
text = ["Blocked by the hook."]
`)
	noUser := filepath.Join(t.TempDir(), "none.toml")
	h := startWith(t, "", func(folder string, ov []config.Override) (config.Config, error) {
		// The user trusts the folder (their own [trust], here the load's).
		cfg, _, err := config.Load(config.LoadOptions{UserFile: noUser, Folder: folder, Overrides: ov, Trusted: true})
		cfg.Model.Provider, cfg.Model.Script, cfg.Model.Name = config.ProviderScript, script, "scripted"
		cfg.Tools.Bash = config.PolicyAllow
		return cfg, err
	})
	h.initialize(false, false)
	id := h.newSession(dir)
	if _, err := h.prompt(id, "clean up"); err != nil {
		t.Fatal(err)
	}
	updates := h.client.snapshot()
	if _, err := os.Stat(filepath.Join(dir, "build/out.o")); err != nil {
		t.Fatalf("rm -rf ran:\n%s", describe(updates))
	}
	if got := agentText(updates); got != "Blocked by the hook." {
		t.Errorf("agent text %q", got)
	}
	var line string
	for _, n := range updates {
		if c := n.Update.AgentThoughtChunk; c != nil && c.Content.Text != nil && strings.HasPrefix(c.Content.Text.Text, "⚑ hook") {
			line = c.Content.Text.Text
		}
	}
	if !strings.Contains(line, "PreToolUse: ./guard.sh: deny: rm -rf is not allowed here") {
		t.Errorf("the hook's line: %q\n%s", line, describe(updates))
	}
}

package acp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
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

// TestHookRewriteInACP: a PreToolUse hook rewrites the model's command in
// an ACP session: the rewritten command is what runs, the client's tool
// call is updated with it (raw input, a title saying so) before it runs,
// and the hook's line says it rewrote the input.
func TestHookRewriteInACP(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	settings := `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./rewrite.sh"}]}]}}`
	rewrite := "#!/bin/bash\ncase \"$(cat)\" in *'echo original'*) echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\",\"updatedInput\":{\"command\":\"echo rewritten > rewritten.txt\"}}}';; esac\n"
	dir := repo(t, map[string]string{".claude/settings.json": settings, "rewrite.sh": rewrite})
	os.Chmod(filepath.Join(dir, "rewrite.sh"), 0o755)
	script := writeScript(t, `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  id = "b1"
  name = "bash"
  arguments = '{"command":"echo original > original.txt"}'

[[step]]
match.last_role = "tool"
text = ["Ran."]
`)
	noUser := filepath.Join(t.TempDir(), "none.toml")
	h := startWith(t, "", func(folder string, ov []config.Override) (config.Config, error) {
		cfg, _, err := config.Load(config.LoadOptions{UserFile: noUser, Folder: folder, Overrides: ov, Trusted: true})
		cfg.Model.Provider, cfg.Model.Script, cfg.Model.Name = config.ProviderScript, script, "scripted"
		cfg.Tools.Bash = config.PolicyAllow
		return cfg, err
	})
	h.initialize(false, false)
	id := h.newSession(dir)
	if _, err := h.prompt(id, "go"); err != nil {
		t.Fatal(err)
	}
	updates := h.client.snapshot()
	if _, err := os.Stat(filepath.Join(dir, "original.txt")); err == nil {
		t.Errorf("the model's command ran, not the rewritten one")
	}
	if _, err := os.Stat(filepath.Join(dir, "rewritten.txt")); err != nil {
		t.Errorf("the rewritten command did not run:\n%s", describe(updates))
	}
	updated, line := false, ""
	for _, n := range updates {
		if u := n.Update.ToolCallUpdate; u != nil && u.Title != nil && strings.Contains(*u.Title, fsm.RewrittenWords) {
			if strings.Contains(fmt.Sprint(u.RawInput), "echo rewritten > rewritten.txt") {
				updated = true
			}
		}
		if c := n.Update.AgentThoughtChunk; c != nil && c.Content.Text != nil && strings.HasPrefix(c.Content.Text.Text, "⚑ hook") {
			line = c.Content.Text.Text
		}
	}
	if !updated {
		t.Errorf("no tool_call_update shows the rewritten command:\n%s", describe(updates))
	}
	if !strings.Contains(line, "rewrote the input: echo rewritten > rewritten.txt") {
		t.Errorf("the hook's line: %q", line)
	}
}

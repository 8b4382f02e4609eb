package gitcmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
)

// TestPinsKeepGitFromRunningTheRepositorysPrograms sets, in a
// repository's own config, each key that makes git run a program to a
// script that leaves a mark, and runs the git command that starts it:
// plain git runs the script (the repository really asks for it); git
// with Env runs nothing.
func TestPinsKeepGitFromRunningTheRepositorysPrograms(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "one\n"})
	marks := t.TempDir()
	script := func(name string) string {
		p := filepath.Join(marks, name+".sh")
		body := "#!/bin/sh\necho ran > " + filepath.Join(marks, name) + "\nexit 1\n"
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hooks := filepath.Join(dir, ".githooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hooks, "reference-transaction"), []byte("#!/bin/sh\necho ran > "+filepath.Join(marks, "hook")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("two\n"), 0o644)
	cases := []struct {
		mark, key string
		args      []string
	}{
		{"fsmonitor", "core.fsmonitor", []string{"status", "--porcelain"}},
		{"hook", "core.hooksPath", []string{"update-ref", "refs/heads/other", "HEAD"}},
		{"external", "diff.external", []string{"diff"}},
		{"credential", "credential.helper", []string{"credential", "fill"}},
		{"editor", "core.editor", []string{"var", "GIT_EDITOR"}},
	}
	for _, c := range cases {
		value := ".githooks"
		if c.mark != "hook" {
			value = script(c.mark)
		}
		if c.key == "credential.helper" {
			value = "!" + value
		}
		gittest.Run(t, dir, "config", c.key, value)
	}
	run := func(env []string, args []string) string {
		cmd := exec.CommandContext(context.Background(), "git", args...)
		cmd.Dir = dir
		cmd.Env = env
		cmd.Stdin = strings.NewReader("protocol=https\nhost=example.com\n\n")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	var plain []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_EDITOR=") && !strings.HasPrefix(kv, "EDITOR=") && !strings.HasPrefix(kv, "VISUAL=") {
			plain = append(plain, kv)
		}
	}
	plain = append(plain, "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat")
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			mark := filepath.Join(marks, c.mark)
			os.Remove(mark)
			out := run(plain, c.args)
			if c.key == "core.editor" {
				// git var names the editor: the one it would start.
				if !strings.Contains(out, c.mark) {
					t.Fatalf("plain git: editor %q, want the repository's script", out)
				}
				if out := run(Env(nil, NoHooks), c.args); strings.Contains(out, c.mark) {
					t.Fatalf("pinned git would start the repository's editor: %q", out)
				}
				return
			}
			if _, err := os.Stat(mark); err != nil {
				t.Fatalf("plain git did not run the repository's %s (the test shows nothing): %s", c.key, out)
			}
			os.Remove(mark)
			gittest.Run(t, dir, "update-ref", "-d", "refs/heads/other")
			os.Remove(mark)
			out = run(Env(nil, NoHooks), c.args)
			if _, err := os.Stat(mark); err == nil {
				t.Fatalf("pinned git ran the repository's %s: %s", c.key, out)
			}
		})
	}
}

// TestEnvKeepsTheUsersOwnParameters: configuration the user passes in the
// environment stays, numbered before the pins, which win.
func TestEnvKeepsTheUsersOwnParameters(t *testing.T) {
	env := Env([]string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=Ann",
		"GIT_CONFIG_KEY_1=core.fsmonitor", "GIT_CONFIG_VALUE_1=/bin/evil"}, NoHooks)
	cmd := exec.Command("git", "config", "--get-all", "core.fsmonitor")
	cmd.Env = env
	cmd.Dir = t.TempDir()
	out, _ := cmd.Output()
	if lines := strings.Fields(string(out)); len(lines) != 2 || lines[1] != "false" {
		t.Fatalf("core.fsmonitor values %q, want the user's then the pin (false, which wins)", lines)
	}
	cmd = exec.Command("git", "config", "user.name")
	cmd.Env = env
	cmd.Dir = t.TempDir()
	if out, _ := cmd.Output(); strings.TrimSpace(string(out)) != "Ann" {
		t.Fatalf("user.name %q, want the user's Ann", out)
	}
}

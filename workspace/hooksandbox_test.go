package workspace

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// TestUsersHooksNeverRunTheAgentsCodeOutsideTheSandbox: real hooks run
// other files of the worktree (make lint, sh scripts/lint.sh, npm run
// lint, an in-tree core.hooksPath). The agent rewrites that file with one
// write_file so that it writes into $HOME, which the sandbox forbids.
// Under "deny" and an "ask" the user refuses, the hooks do not run (the
// commit is made without them, and the user is told once); under
// "allow" and an approved "ask" they run, in the sandbox: nothing is
// written outside the places a command may write.
func TestUsersHooksNeverRunTheAgentsCodeOutsideTheSandbox(t *testing.T) {
	if !sandbox.New(sandbox.Policy{Root: "/"}).Active() {
		t.Skip("no Landlock here")
	}
	type route struct {
		name  string
		files map[string]string // the repository; "pre-commit" goes to the hooks directory
		path  string            // the file the agent rewrites
		text  func(home, ran string) string
		setup func(t *testing.T, dir string)
	}
	script := func(home, ran string) string {
		return "echo ran > '" + ran + "'\necho pwned > '" + home + "/pwned'\n"
	}
	routes := []route{
		{name: "make lint", path: "Makefile",
			files: map[string]string{"pre-commit": "#!/bin/sh\nexec make -s lint\n", "Makefile": "lint:\n\t@true\n"},
			text: func(home, ran string) string {
				return "lint:\n\t@echo ran > '" + ran + "'\n\t@echo pwned > '" + home + "/pwned'\n"
			}},
		{name: "sh scripts/lint.sh", path: "scripts/lint.sh",
			files: map[string]string{"pre-commit": "#!/bin/sh\nexec sh scripts/lint.sh\n", "scripts/lint.sh": "true\n"},
			text:  script},
		{name: "npm run lint", path: "package.json",
			files: map[string]string{"pre-commit": "#!/bin/sh\nexec npm run -s lint\n", "package.json": `{"name":"x","scripts":{"lint":"true"}}` + "\n"},
			text: func(home, ran string) string {
				b, _ := json.Marshal(map[string]any{"name": "x", "scripts": map[string]string{"lint": strings.ReplaceAll(strings.TrimSpace(script(home, ran)), "\n", " && ")}})
				return string(b) + "\n"
			}},
		{name: "core.hooksPath=.githooks", path: ".githooks/pre-commit",
			files: map[string]string{".githooks/pre-commit": "#!/bin/sh\ntrue\n"},
			setup: func(t *testing.T, dir string) {
				runGit(t, dir, "config", "core.hooksPath", ".githooks")
				os.Chmod(filepath.Join(dir, ".githooks", "pre-commit"), 0o755)
			},
			text: func(home, ran string) string { return "#!/bin/sh\n" + script(home, ran) }},
	}
	yes, no := true, false
	policies := []struct {
		name    string
		bash    config.Policy
		approve *bool
		runs    bool
	}{
		{"deny", config.PolicyDeny, nil, false},
		{"ask refused", config.PolicyAsk, &no, false},
		{"ask approved", config.PolicyAsk, &yes, true},
		{"allow", config.PolicyAllow, nil, true},
	}
	for _, r := range routes {
		if r.name == "npm run lint" {
			if _, err := exec.LookPath("npm"); err != nil {
				continue
			}
		}
		for _, p := range policies {
			t.Run(r.name+"/"+p.name, func(t *testing.T) {
				// A home and a temp dir of their own: the sandbox lets
				// commands write the temp dir, never the home.
				base, _ := filepath.EvalSymlinks(t.TempDir())
				home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
				os.MkdirAll(home, 0o755)
				os.MkdirAll(tmp, 0o755)
				t.Setenv("HOME", home)
				t.Setenv("TMPDIR", tmp)
				t.Setenv("npm_config_cache", filepath.Join(tmp, "npm"))
				files := map[string]string{}
				for k, v := range r.files {
					if k != "pre-commit" {
						files[k] = v
					}
				}
				dir := gitRepo(t, files)
				if hook, ok := r.files["pre-commit"]; ok {
					os.WriteFile(filepath.Join(dir, ".git", "hooks", "pre-commit"), []byte(hook), 0o755)
				}
				if r.setup != nil {
					r.setup(t, dir)
				}
				ran := filepath.Join(tmp, "ran")
				args, _ := json.Marshal(map[string]string{"path": r.path, "content": r.text(home, ran)})
				model := scriptModel([]fsm.ToolCall{call("r", "read_file", `{"path":"`+r.path+`"}`)}, []fsm.ToolCall{call("w", "write_file", string(args))})
				h := newTestHost(t, model, func(c *config.Config) { c.Tools.Bash = p.bash })
				if p.approve != nil {
					h.editor.approve = func(a Approval) (bool, error) {
						if a.Tool != "git hooks" {
							t.Errorf("asked about %q", a.Tool)
						}
						return *p.approve, nil
					}
				}
				note := hookOutcome(t, h, dir)
				if _, err := os.Stat(filepath.Join(home, "pwned")); err == nil {
					t.Fatalf("the agent's code wrote into $HOME through the user's hook (%s %q)", note.Kind, note.Text)
				}
				_, err := os.Stat(ran)
				if hookRan := err == nil; hookRan != p.runs {
					t.Fatalf("the hook ran: %v, want %v (%s %q)", hookRan, p.runs, note.Kind, note.Text)
				}
				if !p.runs {
					if note.Kind != NoteCommit || !strings.Contains(note.Text, "your git hooks were not run for this commit") {
						t.Fatalf("hook: %s %q", note.Kind, note.Text)
					}
					told := h.editor.waitFor(t, "the notice that the hooks were skipped", func(n Notification) bool {
						return n.Kind == NoteInfo && n.Visible && strings.Contains(n.Text, "did not run for loom's commit")
					})
					if !strings.Contains(told.Text, "git hook run pre-commit") {
						t.Errorf("the notice does not say how to run them: %q", told.Text)
					}
					return
				}
				// The hook ran in the sandbox: its write into $HOME failed,
				// and so did the hook: nothing committed, the user told.
				if note.Kind != NoteError || !strings.Contains(note.Text, "pre-commit hook failed") {
					t.Fatalf("hook: %s %q", note.Kind, note.Text)
				}
			})
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// TestExecHooksDoNotRunTheAgentsMakefile, through the built binary: the
// user's pre-commit hook runs `make lint`; the agent's one edit of the
// Makefile makes lint write into $HOME. Under --approve bash=deny the
// commit is made without the hook and the user is told how to run it;
// under bash=allow the hook runs in the sandbox, where the write fails
// (and so the commit). Either way nothing lands in $HOME.
func TestExecHooksDoNotRunTheAgentsMakefile(t *testing.T) {
	home, tmp := homeAndTmp(t)
	script := `
[[step]]
match.last_role = "user"
text = ["Reading."]` + readEditScript("Makefile", "lint:", "@true", "@echo pwned > "+home+"/pwned", "edited Makefile") + `text = ["Done."]
`
	for _, policy := range []string{"deny", "allow"} {
		t.Run(policy, func(t *testing.T) {
			dir := gittest.Repo(t, map[string]string{"Makefile": "lint:\n\t@true\n"})
			os.WriteFile(filepath.Join(dir, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\nexec make -s lint\n"), 0o755)
			if policy == "allow" {
				if s := sandbox.New(sandbox.Policy{Root: dir}); !s.Active() {
					t.Skipf("no Landlock here: %s", s.Unavailable())
				}
			}
			env := append(isolatedEnv(t), "HOME="+home, "TMPDIR="+tmp)
			r := runLoomEnv(t, env, dir, "", "exec", "--approve", "bash="+policy, "--script", writeScript(t, script), "lint it")
			out := r.stdout + r.stderr
			if _, err := os.Stat(filepath.Join(home, "pwned")); err == nil {
				t.Fatalf("the agent's Makefile wrote into $HOME through the user's hook:\n%s", out)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "Makefile")); !strings.Contains(string(got), "pwned") {
				t.Fatalf("the edit did not land: %q\n%s", got, out)
			}
			committed := strings.Contains(gittest.Run(t, dir, "log", "-1", "--format=%s"), "Makefile")
			switch policy {
			case "deny":
				if !committed || !strings.Contains(out, "did not run for loom's commit") || !strings.Contains(out, "git hook run pre-commit") {
					t.Fatalf("committed %v; output:\n%s", committed, out)
				}
			case "allow":
				if committed || !strings.Contains(out, "pre-commit hook failed") {
					t.Fatalf("committed %v; output:\n%s", committed, out)
				}
			}
		})
	}
}

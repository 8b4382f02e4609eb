package agentfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandsPrecedenceAndNesting: the first of a name wins, the user's
// over the repository's (said as a problem); nested directories name
// "sub:name" only where the format nests; skills join as commands.
func TestCommandsPrecedenceAndNesting(t *testing.T) {
	folder, home := t.TempDir(), t.TempDir()
	write := func(root, rel, text string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(folder, ".loom/commands/review.md", "repository review")
	write(folder, ".claude/commands/review.md", "claude review")
	write(folder, ".claude/commands/git/push.md", "push")
	write(folder, ".github/prompts/plan.prompt.md", "plan")
	write(folder, ".github/prompts/sub/deep.prompt.md", "not nested here")
	write(folder, ".loom/commands/fix.md", "repository fix")
	write(home, ".claude/commands/fix.md", "user fix")
	cmds, problems := Commands(folder, home, []Skill{{Name: "tidy", UserInvocable: true, Scope: "user"}, {Name: "hidden"}})
	var names []string
	byName := map[string]Command{}
	for _, c := range cmds {
		names = append(names, c.Name+"="+c.Scope)
		byName[c.Name] = c
	}
	if got, want := strings.Join(names, " "), "fix=user git:push=repository plan=repository review=repository tidy=user"; got != want {
		t.Fatalf("commands %s, want %s", got, want)
	}
	if byName["review"].template != "repository review" || byName["fix"].template != "user fix" {
		t.Errorf("review %q, fix %q", byName["review"].template, byName["fix"].template)
	}
	if byName["git:push"].folder != folder {
		t.Errorf("git:push's folder is %q", byName["git:push"].folder)
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Reason, "command /fix is also the user's") {
		t.Errorf("problems %+v", problems)
	}
}

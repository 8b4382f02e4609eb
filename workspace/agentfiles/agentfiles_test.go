package agentfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSkillsFoundListedAndRefused(t *testing.T) {
	repo, home := t.TempDir(), t.TempDir()
	write(t, filepath.Join(repo, ".claude/skills/pdf/SKILL.md"), "---\nname: pdf\ndescription: >\n  Extract text from PDF files.\n  Use when the user mentions PDFs.\n---\n# PDF\nRun scripts/extract.py.\n")
	write(t, filepath.Join(repo, ".claude/skills/pdf/scripts/extract.py"), "print('x')\n")
	write(t, filepath.Join(repo, ".agents/skills/Bad_Name/SKILL.md"), "---\nname: Bad_Name\ndescription: d\n---\n")
	write(t, filepath.Join(repo, ".agents/skills/nodesc/SKILL.md"), "---\nname: nodesc\n---\nbody\n")
	write(t, filepath.Join(repo, ".agents/skills/open/SKILL.md"), "---\nname: open\ndescription: never closed\n")
	write(t, filepath.Join(repo, ".agents/skills/mine/SKILL.md"), "---\nname: mine\ndescription: the repository's\n---\n")
	write(t, filepath.Join(home, ".claude/skills/mine/SKILL.md"), "---\nname: mine\ndescription: \"the user's\"\nuser-invocable: false\n---\nuser body\n")
	skills, problems := Skills(repo, home)
	var names []string
	for _, s := range skills {
		names = append(names, s.Name+"/"+s.Scope)
	}
	if got := strings.Join(names, " "); got != "mine/user pdf/repository" {
		t.Fatalf("skills: %s", got)
	}
	if skills[0].Description != "the user's" || skills[0].UserInvocable {
		t.Errorf("user skill %+v", skills[0])
	}
	if skills[1].Description != "Extract text from PDF files. Use when the user mentions PDFs." {
		t.Errorf("folded description %q", skills[1].Description)
	}
	var probs []string
	for _, p := range problems {
		probs = append(probs, p.String())
	}
	all := strings.Join(probs, "\n")
	for _, want := range []string{"Bad_Name/SKILL.md:1: name \"Bad_Name\"", "nodesc/SKILL.md:1: the front matter has no description", "open/SKILL.md:3: the front matter is not closed", "skill \"mine\" is also the user's"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	body, files, err := skills[1].Body()
	if err != nil || body != "# PDF\nRun scripts/extract.py." || len(files) != 1 || files[0] != "scripts/extract.py" {
		t.Errorf("body %q files %v err %v", body, files, err)
	}
}

// A thousand skills do not grow the prompt past the budget, and the
// ones left out are counted.
func TestListingBudget(t *testing.T) {
	var skills []Skill
	for i := range 1000 {
		skills = append(skills, Skill{Name: fmt.Sprintf("skill-%04d", i), Description: strings.Repeat("does things ", 10)})
	}
	text, omitted := Listing(skills, 4096)
	if len(text) > 4096+200 {
		t.Fatalf("listing of %d bytes over a 4096 budget", len(text))
	}
	if len(omitted) < 900 || !strings.Contains(text, fmt.Sprintf("(%d more skills not listed for space: skill-", len(omitted))) {
		t.Fatalf("omitted %d, text tail %q", len(omitted), text[len(text)-120:])
	}
	if text, _ := Listing(nil, 4096); text != "" {
		t.Errorf("no skills gave %q", text)
	}
}

func TestCommandsExpand(t *testing.T) {
	repo, home := t.TempDir(), t.TempDir()
	write(t, filepath.Join(repo, ".claude/commands/fix-issue.md"), "---\ndescription: Fix an issue\nargument-hint: NUMBER PRIORITY\n---\nFix issue #$1 with priority $2. All: $ARGUMENTS\n")
	write(t, filepath.Join(repo, ".claude/commands/frontend/component.md"), "Make a component.")
	write(t, filepath.Join(repo, ".github/prompts/review.prompt.md"), "---\nmode: agent\n---\nReview the change.")
	write(t, filepath.Join(home, ".codex/prompts/hello.md"), "Say hello to $ARGUMENTS.")
	write(t, filepath.Join(repo, ".claude/skills/pdf/SKILL.md"), "---\nname: pdf\ndescription: PDFs\n---\nRead PDFs carefully.\n")
	skills, _ := Skills(repo, home)
	cmds, problems := Commands(repo, home, skills)
	if len(problems) != 0 {
		t.Fatalf("problems %v", problems)
	}
	byName := map[string]Command{}
	var names []string
	for _, c := range cmds {
		byName[c.Name] = c
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "fix-issue frontend:component hello pdf review" {
		t.Fatalf("commands: %s", got)
	}
	for _, tc := range []struct{ name, args, want string }{
		{"fix-issue", `123 "very high"`, `Fix issue #123 with priority very high. All: 123 "very high"`},
		{"frontend:component", "Button", "Make a component.\n\nARGUMENTS: Button"},
		{"review", "", "Review the change."},
		{"hello", "the world", "Say hello to the world."},
		{"pdf", "summarize a.pdf", "Use the skill \"pdf\" (" + filepath.Join(repo, ".claude/skills/pdf/SKILL.md") + "). Its instructions:\n\nRead PDFs carefully.\n\nThe task: summarize a.pdf"},
	} {
		got, err := byName[tc.name].Expand(tc.args)
		if err != nil || got != tc.want {
			t.Errorf("/%s %s = %q, %v; want %q", tc.name, tc.args, got, err, tc.want)
		}
	}
	if c := byName["fix-issue"]; c.Description != "Fix an issue" || c.ArgumentHint != "NUMBER PRIORITY" {
		t.Errorf("front matter %+v", c)
	}
}

func TestParseCall(t *testing.T) {
	for _, tc := range []struct {
		prompt, name, args string
		ok                 bool
	}{
		{"/fix-issue 12 high", "fix-issue", "12 high", true},
		{"/review", "review", "", true},
		{"/frontend:component Button\nwith a label", "frontend:component", "Button\nwith a label", true},
		{"/usr/bin/env is missing", "", "", false},
		{"fix /this", "", "", false},
		{"/ nothing", "", "", false},
	} {
		name, args, ok := ParseCall(tc.prompt)
		if name != tc.name || args != tc.args || ok != tc.ok {
			t.Errorf("ParseCall(%q) = %q, %q, %v", tc.prompt, name, args, ok)
		}
	}
}

package agentfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Gemini CLI's .toml commands: {{args}}, the command appended when the
// prompt has none, @{path} from the folder (never outside it), and
// files that would run shell commands or are malformed named, not
// offered.
func TestGeminiCommands(t *testing.T) {
	repo, home, outside := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(repo, ".gemini/commands/git/fix.toml"), "description = \"Generates a fix for a given issue.\"\nprompt = \"Please provide a code fix for the issue described here: {{args}}.\"\n")
	write(t, filepath.Join(repo, ".gemini/commands/changelog.toml"), "prompt = \"\"\"\nUpdate the changelog.\n\"\"\"\n")
	write(t, filepath.Join(repo, ".gemini/commands/review.toml"), "prompt = \"\"\"\nReview {{args}} with:\n@{docs/guide.md}\"\"\"\n")
	write(t, filepath.Join(repo, "docs/guide.md"), "Keep functions short.\n")
	write(t, filepath.Join(repo, ".gemini/commands/escape.toml"), "prompt = \"@{../"+filepath.Base(outside)+"/secret.txt}\"\n")
	write(t, filepath.Join(outside, "secret.txt"), "outside the folder\n")
	write(t, filepath.Join(repo, ".gemini/commands/commit.toml"), "prompt = \"Write a message for:\\n!{git diff --staged}\"\n")
	write(t, filepath.Join(repo, ".gemini/commands/broken.toml"), "description = \"x\"\nprompt = \"unclosed\n")
	write(t, filepath.Join(repo, ".gemini/commands/noprompt.toml"), "description = \"nothing to say\"\n")
	write(t, filepath.Join(home, ".config/gemini-cli/commands/hello.toml"), "prompt = \"Say hello.\"\n")
	cmds, problems := Commands(repo, home, nil)
	byName := map[string]Command{}
	var names []string
	for _, c := range cmds {
		byName[c.Name] = c
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "changelog escape git:fix hello review" {
		t.Fatalf("commands: %s", got)
	}
	var probs []string
	for _, p := range problems {
		probs = append(probs, p.String())
	}
	all := strings.Join(probs, "\n")
	for _, want := range []string{"commit.toml: the prompt runs shell commands", "broken.toml:2: ", "noprompt.toml:1: no prompt"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	for _, tc := range []struct{ name, args, want string }{
		{"git:fix", `"Button is misaligned"`, `Please provide a code fix for the issue described here: "Button is misaligned".`},
		{"changelog", `1.2.0 added "New feature"`, "Update the changelog.\n\n/changelog 1.2.0 added \"New feature\""},
		{"changelog", "", "Update the changelog."},
		{"review", "main.go", "Review main.go with:\nKeep functions short.\n"},
		{"hello", "", "Say hello."},
	} {
		got, err := byName[tc.name].Expand(tc.args)
		if err != nil || got != tc.want {
			t.Errorf("/%s %s = %q, %v; want %q", tc.name, tc.args, got, err, tc.want)
		}
	}
	if got, err := byName["escape"].Expand(""); err == nil || strings.Contains(got, "outside the folder") {
		t.Errorf("@{..} outside the folder: %q, %v", got, err)
	}
	if c := byName["git:fix"]; c.Description != "Generates a fix for a given issue." || c.Scope != "repository" {
		t.Errorf("git:fix %+v", c)
	}
	if err := os.Remove(filepath.Join(repo, "docs/guide.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := byName["review"].Expand("x"); err == nil || !strings.Contains(err.Error(), "/review: @{docs/guide.md}") {
		t.Errorf("a missing @{file}: %v", err)
	}
}

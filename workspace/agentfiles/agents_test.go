package agentfiles

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The formats' published examples, read unchanged.
const (
	// Claude Code's docs (code.claude.com/docs/en/sub-agents): a
	// comma-separated tools string, model inherit.
	claudeReviewer = `---
name: code-reviewer
description: Expert code review specialist. Proactively reviews code for quality, security, and maintainability. Use immediately after writing or modifying code.
tools: Read, Grep, Glob, Bash
model: inherit
color: blue
---
You are a senior code reviewer ensuring high standards of code quality and security.

When invoked:
1. Run git diff to see recent changes
2. Focus on modified files
`
	// Codex's docs (developers.openai.com/codex/subagents).
	codexReviewer = `name = "reviewer"
description = "PR reviewer focused on correctness, security, and missing tests."
model = "gpt-5.4"
model_reasoning_effort = "high"
sandbox_mode = "read-only"
nickname_candidates = ["Atlas", "Delta"]
developer_instructions = """
Review code like an owner.
Prioritize correctness, security, behavior regressions, and missing test coverage.
"""

[mcp_servers.openaiDeveloperDocs]
url = "https://developers.openai.com/mcp"
`
	// VS Code's custom agent file reference: tools as a flow list, the
	// name defaulting to the file's.
	vscodePlanner = `---
description: Generate an implementation plan for new features or refactoring existing code.
tools: ['fetch', 'githubRepo', 'search', 'usages']
model: ['Claude Sonnet 4.5 (copilot)', 'GPT-5 (copilot)']
handoffs:
  - label: Implement Plan
    agent: agent
    prompt: Implement the plan outlined above.
    send: false
---
# Planning instructions
You are in planning mode. Don't make any code edits, just generate a plan.
`
	// A block-list tools key and an MCP server reference.
	vscodeBlock = `---
name: 'Code Reviewer'
description: 'Review code for quality, security, and best practices'
tools:
  - read
  - search
  - github/*
---
Review.
`
)

func TestAgentsReadFromThePublishedFormats(t *testing.T) {
	repo, home, userDir := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(repo, ".claude/agents/code-reviewer.md"), claudeReviewer)
	write(t, filepath.Join(repo, ".codex/agents/reviewer.toml"), codexReviewer)
	write(t, filepath.Join(repo, ".github/agents/planner.agent.md"), vscodePlanner)
	write(t, filepath.Join(repo, ".github/agents/reviewer2.agent.md"), vscodeBlock)
	write(t, filepath.Join(repo, ".github/agents/README.md"), "not an agent\n")
	write(t, filepath.Join(repo, ".claude/agents/broken.md"), "---\nname: broken\ndescription: [unclosed\n---\nbody\n")
	write(t, filepath.Join(repo, ".claude/agents/nameless.md"), "---\ndescription: no name\n---\nbody\n")
	write(t, filepath.Join(repo, ".claude/agents/researcher.md"), "---\nname: researcher\ndescription: shadows the built-in\n---\nbody\n")
	write(t, filepath.Join(repo, ".loom/agents/mine.md"), "---\nname: mine\ndescription: the repository's\n---\nrepo body\n")
	write(t, filepath.Join(home, ".claude/agents/mine.md"), "---\nname: mine\ndescription: the user's\ntools: [read_file]\n---\nuser body\n")
	write(t, filepath.Join(userDir, "agents/loomy.md"), "---\nname: loomy\ndescription: loom's own, user level\ndisallowedTools: Bash\n---\nx\n")

	agents, problems := Agents(repo, home, userDir)
	var names []string
	for _, a := range agents {
		names = append(names, a.Name+"/"+a.Scope+"/"+a.Format)
	}
	want := "researcher/builtin/loom worker/builtin/loom Code Reviewer/repository/vscode code-reviewer/repository/claude loomy/user/loom mine/user/claude planner/repository/vscode reviewer/repository/codex"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("agents:\n got %s\nwant %s", got, want)
	}
	get := func(name string) Agent {
		a, ok := Find(agents, name)
		if !ok {
			t.Fatalf("no agent %q", name)
		}
		return a
	}

	cr := get("CODE-REVIEWER")
	if !slices.Equal(cr.Tools, []string{"read_file", "grep", "list_files", "bash"}) || cr.Model != "inherit" || !strings.HasPrefix(cr.Instructions, "You are a senior code reviewer") {
		t.Errorf("claude: %+v", cr)
	}
	if !slices.Equal(cr.Ignored, []string{"color (line 6)"}) {
		t.Errorf("claude ignored %v", cr.Ignored)
	}
	if cr.Fingerprint == "" || cr.Allows("edit_file") || !cr.Allows("bash") {
		t.Errorf("claude fingerprint/allows: %+v", cr)
	}

	cx := get("reviewer")
	if !cx.ReadOnly || cx.Model != "gpt-5.4" || !strings.HasPrefix(cx.Instructions, "Review code like an owner.") || cx.Tools != nil {
		t.Errorf("codex: %+v", cx)
	}
	for _, k := range []string{"model_reasoning_effort", "nickname_candidates", "mcp_servers"} {
		if !slices.Contains(cx.Ignored, k) {
			t.Errorf("codex ignored %v lacks %s", cx.Ignored, k)
		}
	}

	pl := get("planner")
	if pl.Model != "Claude Sonnet 4.5 (copilot)" || !slices.Equal(pl.Tools, []string{"web_fetch", "grep", "list_files"}) {
		t.Errorf("vscode planner: %+v", pl)
	}
	if !slices.Contains(pl.Ignored, "tool githubRepo") || !slices.Contains(pl.Ignored, "handoffs (line 5)") {
		t.Errorf("vscode ignored %v", pl.Ignored)
	}
	rv := get("code reviewer")
	if !slices.Equal(rv.Tools, []string{"read_file", "grep", "list_files", "github__*"}) || !rv.Allows("github__search_issues") || rv.Allows("gitlab__x") {
		t.Errorf("vscode block list: %+v", rv)
	}

	if m := get("mine"); m.Scope != ScopeUser || !slices.Equal(m.Tools, []string{"read_file"}) || m.Instructions != "user body" || m.Fingerprint != "" {
		t.Errorf("user's mine: %+v", m)
	}
	if l := get("loomy"); l.Allows("bash") || !l.Allows("edit_file") {
		t.Errorf("disallowedTools: %+v", l)
	}
	if r := get("researcher"); r.Scope != ScopeBuiltin || r.Allows("bash") || r.Allows("edit_file") || !r.Allows("grep") || !r.ReadOnly {
		t.Errorf("built-in researcher: %+v", r)
	}

	var probs []string
	for _, p := range problems {
		probs = append(probs, p.String())
	}
	all := strings.Join(probs, "\n")
	for _, w := range []string{"broken.md:1: front matter:", "nameless.md:1: the definition has no name", `agent "researcher" is a built-in agent's name`, `agent "mine" is also the user's`} {
		if !strings.Contains(all, w) {
			t.Errorf("problems lack %q:\n%s", w, all)
		}
	}
	if len(problems) != 4 {
		t.Errorf("%d problems:\n%s", len(problems), all)
	}
}

// A repository definition's fingerprint changes with its content: trust
// binds to what was read.
func TestAgentFingerprintBindsContent(t *testing.T) {
	repo := t.TempDir()
	p := filepath.Join(repo, ".claude/agents/a.md")
	write(t, p, "---\nname: a\ndescription: d\n---\nbe good\n")
	before, _ := Agents(repo, "", "")
	write(t, p, "---\nname: a\ndescription: d\n---\nbe bad\n")
	after, _ := Agents(repo, "", "")
	a1, _ := Find(before, "a")
	a2, _ := Find(after, "a")
	if a1.Fingerprint == "" || a1.Fingerprint == a2.Fingerprint {
		t.Fatalf("fingerprints %q %q", a1.Fingerprint, a2.Fingerprint)
	}
}

func TestAgentsListingBudget(t *testing.T) {
	text := AgentsListing(Builtin(), 4096)
	if !strings.Contains(text, "- researcher (read-only): Read-only research") || !strings.Contains(text, "- worker: ") {
		t.Fatalf("listing %q", text)
	}
	if short := AgentsListing(Builtin(), 40); !strings.Contains(short, "not listed for space") {
		t.Fatalf("budget listing %q", short)
	}
}

// Claude Code's permissionMode: plan asks for a read-only child,
// bypassPermissions for every permission (the parent's policy narrows
// it: workspace's TestSubagentNeverMoreThanParent); others are named.
func TestAgentPermissionMode(t *testing.T) {
	dir := t.TempDir()
	for mode, want := range map[string]Agent{
		"plan":              {ReadOnly: true},
		"bypassPermissions": {Unasked: true},
		"acceptEdits":       {Ignored: []string{"permissionMode: acceptEdits (line 4)"}},
	} {
		path := filepath.Join(dir, mode+".md")
		if err := os.WriteFile(path, []byte("---\nname: a\ndescription: d\npermissionMode: "+mode+"\n---\nbody\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		a, p := ReadAgent(path, FormatClaude, ScopeUser)
		if p != nil {
			t.Fatalf("%s: %v", mode, p)
		}
		if a.ReadOnly != want.ReadOnly || a.Unasked != want.Unasked || !slices.Equal(a.Ignored, want.Ignored) {
			t.Errorf("permissionMode %s: read-only %v, unasked %v, ignored %q", mode, a.ReadOnly, a.Unasked, a.Ignored)
		}
	}
}

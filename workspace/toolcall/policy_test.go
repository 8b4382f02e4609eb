package toolcall

import (
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
)

func bashCall(cmd string) Call {
	return Call{ToolCall: fsm.ToolCall{ID: "c1", Name: "bash", Arguments: `{"command":` + quote(cmd) + `}`}, Known: true, Spec: fsm.ToolSpec{Mutating: true}}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func editCall(path string) Call {
	return Call{ToolCall: fsm.ToolCall{ID: "c2", Name: "edit_file", Arguments: `{"path":` + quote(path) + `,"old_string":"a","new_string":"b"}`}, Known: true, Spec: fsm.ToolSpec{Mutating: true}}
}

func mcpCall(server string) Call {
	return Call{ToolCall: fsm.ToolCall{ID: "c3", Name: server + "__search", Arguments: `{}`}, Known: true, Server: server}
}

func readCall() Call {
	return Call{ToolCall: fsm.ToolCall{ID: "c4", Name: "read_file", Arguments: `{"path":"a.go"}`}, Known: true}
}

// TestDecide is the policy stage's table: each row a call under a
// policy, and what it decides.
func TestDecide(t *testing.T) {
	root := t.TempDir()
	goTest := []cmdrules.Rule{{Prefix: "go test"}}
	asked := func(c Call) Call { c.Asked = true; return c }
	unknown := readCall()
	unknown.Known, unknown.Name = false, "fly"
	sandboxedBash := bashCall("ls")
	sandboxedBash.Spec.RunsReadOnly = true
	for _, tc := range []struct {
		name     string
		call     Call
		policy   Policy
		verdict  Verdict
		why      string // a part of Why
		approved bool
	}{
		{"unknown tool", unknown, Policy{Root: root}, Refuse, `unknown tool "fly"`, false},
		{"read runs", readCall(), Policy{Root: root}, Allow, "", false},
		{"read after a hook's approval", asked(readCall()), Policy{Root: root}, Allow, "", true},
		{"bash allow", bashCall("rm -rf build"), Policy{Root: root, Bash: config.PolicyAllow}, Allow, "", false},
		{"bash deny", bashCall("ls"), Policy{Root: root, Bash: config.PolicyDeny}, Refuse, `tools.bash = "deny"`, false},
		{"bash ask, no rule", bashCall("make"), Policy{Root: root, Bash: config.PolicyAsk}, Ask, "", false},
		{"bash unset is ask", bashCall("make"), Policy{Root: root}, Ask, "", false},
		{"bash ask, a rule covers it", bashCall("go test ./..."), Policy{Root: root, Bash: config.PolicyAsk, Rules: goTest}, Approve, "allowed by the rule commands starting with `go test`", false},
		{"bash ask, a rule covers half", bashCall("go test ./...; rm -rf ~"), Policy{Root: root, Bash: config.PolicyAsk, Rules: goTest}, Ask, "", false},
		{"bash ask, approved at a hook's request", asked(bashCall("make")), Policy{Root: root, Bash: config.PolicyAsk}, Allow, "", true},
		{"bash deny beats a hook's approval", asked(bashCall("make")), Policy{Root: root, Bash: config.PolicyDeny}, Refuse, "disabled", false},
		{"bash allow after a hook's approval is marked running", asked(bashCall("make")), Policy{Root: root, Bash: config.PolicyAllow}, Allow, "", false},
		{"read-only batch without sandbox", bashCall("ls"), Policy{Root: root, Bash: config.PolicyAllow, ReadOnly: true, NoSandbox: "no Landlock"}, Refuse, "there is none here (no Landlock)", false},
		{"read-only batch in a sandbox", bashCall("ls"), Policy{Root: root, Bash: config.PolicyAllow, ReadOnly: true, Sandboxed: true}, Allow, "", false},
		{"plan mode refuses an edit", editCall("a.go"), Policy{Root: root, Mode: fsm.ModePlan}, Refuse, "refused in plan mode", false},
		{"ask mode refuses an edit", editCall("a.go"), Policy{Root: root, Mode: fsm.ModeAsk}, Refuse, "refused in ask mode", false},
		{"plan mode lets a read-only command through", sandboxedBash, Policy{Root: root, Mode: fsm.ModePlan, Bash: config.PolicyAllow, Sandboxed: true, ReadOnly: true}, Allow, "", false},
		{"agent mode edits", editCall("a.go"), Policy{Root: root, Mode: fsm.ModeAgent}, Allow, "", false},
		{"protected: .loom.toml", editCall(".loom.toml"), Policy{Root: root}, Refuse, "edit_file: .loom.toml is loom's configuration", false},
		{"protected: a deep .loom.toml", editCall("sub/.loom.toml"), Policy{Root: root}, Refuse, "tool error: edit_file:", false},
		{"protected: a parent's name", editCall("vendor/x.go"), Policy{Root: root, Protected: []string{"vendor"}}, Refuse, "is protected here", false},
		{"protected names do not touch reads", Call{ToolCall: fsm.ToolCall{Name: "read_file", Arguments: `{"path":".loom.toml"}`}, Known: true}, Policy{Root: root}, Allow, "", false},
		{"mcp unlisted is ask", mcpCall("gh"), Policy{Root: root}, Ask, "", false},
		{"mcp allow", mcpCall("gh"), Policy{Root: root, MCP: map[string]config.Policy{"gh": config.PolicyAllow}}, Allow, "", false},
		{"mcp deny", mcpCall("gh"), Policy{Root: root, MCP: map[string]config.Policy{"gh": config.PolicyDeny}}, Refuse, `MCP server "gh" are disabled`, false},
		{"mcp ask, server allowed by the user", mcpCall("gh"), Policy{Root: root, MCP: map[string]config.Policy{"gh": config.PolicyAsk}, Servers: []string{"gh"}}, Allow, "", false},
		{"mcp ask after a hook's approval still asks", asked(mcpCall("gh")), Policy{Root: root}, Ask, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.call, tc.policy)
			if d.Verdict != tc.verdict || !strings.Contains(d.Why, tc.why) || d.Approved != tc.approved {
				t.Fatalf("Decide = %v %q approved=%v, want %v %q approved=%v", d.Verdict, d.Why, d.Approved, tc.verdict, tc.why, tc.approved)
			}
		})
	}
}

// TestDecideSuggestsRules: an asked command comes with the rules the
// user may pick to remember.
func TestDecideSuggestsRules(t *testing.T) {
	d := Decide(bashCall("go test ./..."), Policy{Root: t.TempDir()})
	if d.Verdict != Ask || d.Command != "go test ./..." || d.Exact == nil {
		t.Fatalf("Decide = %+v, want Ask with the command and an exact rule to remember", d)
	}
}

// TestNarrowNeverWidens: a child's policy, narrowed by its parent's,
// allows nothing either of them refuses or asks for, row by row.
func TestNarrowNeverWidens(t *testing.T) {
	root := t.TempDir()
	parent := Policy{Root: root, Mode: fsm.ModeAgent, Bash: config.PolicyAsk, Sandboxed: true, Trusted: true,
		MCP:     map[string]config.Policy{"gh": config.PolicyAllow, "db": config.PolicyDeny},
		Rules:   []cmdrules.Rule{{Prefix: "go test"}, {Exact: "make lint"}},
		Servers: []string{"docs"}}
	wide := Policy{Root: root, Mode: fsm.ModeAgent, Bash: config.PolicyAllow, Sandboxed: true, Trusted: true,
		MCP:     map[string]config.Policy{"gh": config.PolicyAllow, "db": config.PolicyAllow, "web": config.PolicyAllow},
		Rules:   []cmdrules.Rule{{Every: true}, {Prefix: "go test -run"}, {Prefix: "go"}, {Exact: "make lint"}, {Exact: "rm -rf /"}},
		Servers: []string{"docs", "web"}}
	n := parent.Narrow(wide)
	calls := []Call{bashCall("rm -rf ~"), bashCall("go test ./..."), bashCall("go test -run X ./..."), bashCall("go vet"), bashCall("make lint"),
		mcpCall("gh"), mcpCall("db"), mcpCall("web"), mcpCall("docs"), editCall("a.go"), editCall("vendor/a.go"), readCall()}
	for _, c := range calls {
		got, byParent := Decide(c, n), Decide(c, parent)
		if got.Verdict < byParent.Verdict && !(got.Verdict == Allow && byParent.Verdict == Approve) {
			t.Errorf("%s %s: narrowed %v, parent %v: the child got more than its parent", c.Name, c.Arguments, got.Verdict, byParent.Verdict)
		}
	}
	if n.Bash != config.PolicyAsk || n.MCP["db"] != config.PolicyDeny || n.MCP["web"] != config.PolicyAsk || n.MCP["gh"] != config.PolicyAllow {
		t.Errorf("Narrow = bash %q, mcp %v", n.Bash, n.MCP)
	}
	want := []cmdrules.Rule{{Prefix: "go test -run"}, {Exact: "make lint"}}
	if len(n.Rules) != len(want) || n.Rules[0] != want[0] || n.Rules[1] != want[1] {
		t.Errorf("Narrow rules = %v, want %v (every, `go` and `rm -rf /` are wider than the parent's)", n.Rules, want)
	}
	if len(n.Servers) != 1 || n.Servers[0] != "docs" {
		t.Errorf("Narrow servers = %v, want [docs]", n.Servers)
	}

	// A stricter child stays as strict.
	strict := Policy{Mode: fsm.ModePlan, Bash: config.PolicyDeny, ReadOnly: true, Protected: []string{"vendor"}}
	s := parent.Narrow(strict)
	if s.Mode != fsm.ModePlan || s.Bash != config.PolicyDeny || !s.ReadOnly || s.Trusted || s.Sandboxed || len(s.Rules) != 0 {
		t.Errorf("Narrow(strict) = %+v", s)
	}
	if d := Decide(editCall("vendor/a.go"), s); d.Verdict != Refuse {
		t.Errorf("the child's protected name: %v", d.Verdict)
	}
	// And the parent's narrowing of a grandchild keeps them.
	if g := s.Narrow(wide); g.Mode != fsm.ModePlan || g.Bash != config.PolicyDeny || len(g.Protected) != 1 {
		t.Errorf("grandchild = %+v", g)
	}
}

// TestInherit: a child that asks for nothing gets its parent's policy,
// deciding every call the same way, with lists of its own.
func TestInherit(t *testing.T) {
	root := t.TempDir()
	p := Policy{Root: root, Mode: fsm.ModeAgent, Bash: config.PolicyAsk, Sandboxed: true, Trusted: true,
		MCP: map[string]config.Policy{"gh": config.PolicyAllow}, Rules: []cmdrules.Rule{{Prefix: "go test"}}, Servers: []string{"docs"}}
	c := p.Inherit()
	for _, call := range []Call{bashCall("go test ./..."), bashCall("make"), mcpCall("gh"), mcpCall("docs"), mcpCall("x"), editCall("a.go")} {
		if a, b := Decide(call, p), Decide(call, c); a.Verdict != b.Verdict || a.Why != b.Why {
			t.Errorf("%s: parent %v, inherited %v", call.Arguments, a.Verdict, b.Verdict)
		}
	}
	c.MCP["gh"] = config.PolicyDeny
	if p.MCP["gh"] != config.PolicyAllow {
		t.Error("the inherited policy shares its parent's map")
	}
}

func TestStricter(t *testing.T) {
	for _, tc := range []struct{ a, b, want config.Policy }{
		{config.PolicyAllow, config.PolicyAllow, config.PolicyAllow},
		{config.PolicyAllow, config.PolicyAsk, config.PolicyAsk},
		{config.PolicyDeny, config.PolicyAllow, config.PolicyDeny},
		{config.PolicyAsk, config.PolicyDeny, config.PolicyDeny},
		{"", config.PolicyAllow, config.PolicyAsk},
	} {
		if got := stricter(tc.a, tc.b); got != tc.want {
			t.Errorf("stricter(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
	for _, tc := range []struct{ a, b, want fsm.Mode }{
		{fsm.ModeAgent, fsm.ModePlan, fsm.ModePlan}, {fsm.ModeAsk, fsm.ModePlan, fsm.ModeAsk}, {"", "", fsm.ModeAgent}, {fsm.ModePlan, fsm.ModeAgent, fsm.ModePlan},
	} {
		if got := stricterMode(tc.a, tc.b); got != tc.want {
			t.Errorf("stricterMode(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

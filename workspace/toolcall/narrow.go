package toolcall

import (
	"slices"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
)

// Narrow is the policy of a child conversation (a subagent) that asks
// for child, started by a conversation under p: each part is the
// narrower of the two, so that what the result allows both p and child
// allow. A child that asks for nothing of its own passes its parent's
// policy as child (Inherit).
//
// The mode is the more read-only one (ask, then plan, then agent); a
// batch is read-only if either says so; commands are sandboxed only if
// both are; tools.bash and each MCP server's policy are the stricter
// (deny, then ask, then allow); the approval rules and the allowed MCP
// servers are those of the child that its parent's cover; trust needs
// both; the protected names are both lists. Root is the child's when it
// names one (a worktree conversation), else the parent's.
func (p Policy) Narrow(child Policy) Policy {
	n := Policy{
		Root:      cmpOr(child.Root, p.Root),
		Mode:      stricterMode(p.Mode, child.Mode),
		ReadOnly:  p.ReadOnly || child.ReadOnly,
		Sandboxed: p.Sandboxed && child.Sandboxed,
		NoSandbox: cmpOr(p.NoSandbox, child.NoSandbox),
		Bash:      stricter(p.bash(), child.bash()),
		Trusted:   p.Trusted && child.Trusted,
		Protected: union(p.Protected, child.Protected),
	}
	for _, server := range union(keys(p.MCP), keys(child.MCP)) {
		if n.MCP == nil {
			n.MCP = map[string]config.Policy{}
		}
		n.MCP[server] = stricter(p.mcp(server), child.mcp(server))
	}
	for _, s := range child.Servers {
		if slices.Contains(p.Servers, s) && !slices.Contains(n.Servers, s) {
			n.Servers = append(n.Servers, s)
		}
	}
	for _, r := range child.Rules {
		if coveredBy(r, p.Rules, p.Root) && !slices.Contains(n.Rules, r) {
			n.Rules = append(n.Rules, r)
		}
	}
	return n
}

// Inherit is the policy a child conversation that asks for nothing of
// its own gets: p itself, as a copy the child may narrow further but
// never widen (its maps and lists are its own).
func (p Policy) Inherit() Policy { return p.Narrow(p) }

// coveredBy reports whether every command rule r allows, rules allow
// too: the rule itself, "every command", an exact line the rules match,
// or a prefix that extends one of theirs.
func coveredBy(r cmdrules.Rule, rules []cmdrules.Rule, root string) bool {
	for _, q := range rules {
		switch {
		case q == r, q.Every:
			return true
		case q.Prefix != "" && r.Prefix != "" && hasWordPrefix(r.Prefix, q.Prefix):
			return true
		}
	}
	if r.Exact != "" {
		ok, _ := cmdrules.Match(rules, cmdrules.Parse(r.Exact, root), root)
		return ok
	}
	return false
}

// hasWordPrefix reports whether the words of s start with those of
// prefix.
func hasWordPrefix(s, prefix string) bool {
	w, pw := strings.Fields(s), strings.Fields(prefix)
	return len(pw) > 0 && len(w) >= len(pw) && slices.Equal(w[:len(pw)], pw)
}

// stricter is the narrower of two policies: deny, then ask, then allow
// (an unknown word counts as ask).
func stricter(a, b config.Policy) config.Policy {
	rank := func(p config.Policy) int {
		switch p {
		case config.PolicyAllow:
			return 0
		case config.PolicyDeny:
			return 2
		}
		return 1
	}
	words := [...]config.Policy{config.PolicyAllow, config.PolicyAsk, config.PolicyDeny}
	return words[max(rank(a), rank(b))]
}

// stricterMode is the more read-only of two modes: ask, then plan, then
// agent ("" is agent).
func stricterMode(a, b fsm.Mode) fsm.Mode {
	rank := map[fsm.Mode]int{fsm.ModeAsk: 2, fsm.ModePlan: 1}
	if rank[b] > rank[a] {
		return b
	}
	if a == "" {
		return fsm.ModeAgent
	}
	return a
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// union is a's names then b's not in a.
func union(a, b []string) []string {
	var out []string
	for _, s := range append(slices.Clone(a), b...) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func keys(m map[string]config.Policy) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

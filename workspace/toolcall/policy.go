package toolcall

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
)

// Policy is what a conversation lets its tool calls do: the policy
// stage decides each call from it alone (Decide). It is a value: a
// conversation copies it when a batch starts, and a child conversation
// (a subagent) is handed its parent's, narrowed (Narrow), never wider.
//
// The zero value refuses nothing it does not know and asks for every
// command and every MCP call: Bash "" and a server missing from MCP are
// "ask".
type Policy struct {
	// Root is the workspace folder, absolute: approval rules match
	// commands relative to it and protected names are found beneath it.
	Root string
	// Mode is the conversation's mode: in a read-only one (plan, ask) a
	// mutating tool that does not run read-only is refused.
	Mode fsm.Mode
	// ReadOnly is set for a batch the machine runs read-only
	// (fsm.ExecuteTools.ReadOnly): its commands run only in a sandbox
	// that keeps the workspace read-only.
	ReadOnly bool
	// Sandboxed says a sandbox confines commands here; NoSandbox says
	// why not, when it does not.
	Sandboxed bool
	NoSandbox string
	// Bash is tools.bash: allow, ask ("" is ask) or deny.
	Bash config.Policy
	// MCP is each MCP server's approve policy; a server not listed is
	// "ask".
	MCP map[string]config.Policy
	// Rules are the folder's approval rules: the commands that run
	// unasked under Bash = "ask".
	Rules []cmdrules.Rule
	// Servers are the MCP servers whose tools the user allowed for good
	// in this folder: they run unasked under "ask".
	Servers []string
	// Trusted says the folder is trusted. Its configuration already
	// took what an untrusted .loom.toml may not widen; a child is
	// trusted only if its parent is.
	Trusted bool
	// Protected are names beyond loom's own protected names
	// (config.IsProtectedIn) that the write tools must not write: a
	// path that ends with one, or lies beneath one, is refused.
	Protected []string
}

// Call is one tool call as the policy stage sees it: the call that runs
// (after the PreToolUse hooks) and what the registry says of its tool.
type Call struct {
	fsm.ToolCall
	// Known says the registry has the tool; Spec is its spec.
	Known bool
	Spec  fsm.ToolSpec
	// Server is the MCP server of an MCP tool, "" for a built-in tool.
	Server string
	// Asked says the user approved the call already, at a PreToolUse
	// hook's request.
	Asked bool
}

// Verdict is what the policy says of a call.
type Verdict int

// The verdicts.
const (
	// Allow: the call runs unasked.
	Allow Verdict = iota
	// Approve: the call runs unasked because the user's approval rules
	// cover it; the approval is stepped, with Why, before it runs.
	Approve
	// Ask: the user is asked first.
	Ask
	// Refuse: the call does not run; Why is its result for the model.
	Refuse
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Approve:
		return "approve"
	case Ask:
		return "ask"
	case Refuse:
		return "refuse"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Decision is the policy stage's answer for one call.
type Decision struct {
	Verdict Verdict
	// Why is the refusal's tool result (Refuse), or why the call runs
	// unasked (Approve: "allowed by the rule …").
	Why string
	// Approved says the machine has the call's approval already (the
	// user approved at a hook's request): it is not marked running again.
	Approved bool
	// Command is a command's line (bash), as the user is shown it; Exact
	// and Prefix are the rules an Ask may offer to remember.
	Command       string
	Exact, Prefix *cmdrules.Rule
}

// Decide is the policy stage: what the policy p says of call c. It
// changes nothing and asks no one; it reads the file system only as
// the approval rules resolve a command's paths.
//
// In order: an unknown tool, a command of a read-only batch with no
// sandbox, a mutating tool in a read-only mode and a write to a
// protected name are refused; then bash follows Bash (and, under "ask",
// the approval rules), an MCP tool its server's policy (and, under
// "ask", the servers the user allowed); every other tool runs.
func Decide(c Call, p Policy) Decision {
	if why := refusal(c, p); why != "" {
		return Decision{Verdict: Refuse, Why: why}
	}
	switch {
	case c.Name == "bash":
		return decideBash(c, p)
	case c.Server != "":
		return decideMCP(c, p)
	}
	return Decision{Verdict: Allow, Approved: c.Asked}
}

// refusal is why the call is refused whatever the approvals say, "" if
// it is not.
func refusal(c Call, p Policy) string {
	switch {
	case !c.Known:
		return fmt.Sprintf("tool error: unknown tool %q", c.Name)
	case p.ReadOnly && c.Name == "bash" && !p.Sandboxed:
		return fmt.Sprintf("tool error: in plan and ask modes commands run only in a sandbox that keeps the workspace read-only, "+
			"and there is none here (%s); nothing was run", p.NoSandbox)
	}
	if why := fsm.ModeRefusal(p.Mode, c.Name, c.Spec); why != "" {
		return why
	}
	return p.protectedRefusal(c)
}

// writeTools are the built-in tools that write the file their "path"
// argument names.
var writeTools = map[string]bool{"edit_file": true, "write_file": true}

// protectedRefusal refuses a write tool's call whose path is a
// protected name, in the words the tool itself uses (tools.resolveForWrite
// checks again, with symlinks resolved).
func (p Policy) protectedRefusal(c Call) string {
	if !writeTools[c.Name] || p.Root == "" {
		return ""
	}
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal([]byte(c.Arguments), &args) != nil || args.Path == "" || strings.ContainsRune(args.Path, 0) {
		return ""
	}
	abs := args.Path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(p.Root, abs)
	}
	abs = filepath.Clean(abs)
	if err := config.CheckProtected(p.Root, abs); err != nil {
		return fmt.Sprintf("tool error: %s: %v", c.Name, err)
	}
	for _, name := range p.Protected {
		if protectedBy(abs, name) {
			return fmt.Sprintf("tool error: %s: %s is protected here (the conversation that started this one keeps it); ask the user to change it", c.Name, args.Path)
		}
	}
	return ""
}

// protectedBy reports whether abs is the protected name (a relative
// name: any path ending with it; an absolute one: that path) or lies
// beneath it.
func protectedBy(abs, name string) bool {
	name = filepath.Clean(name)
	if filepath.IsAbs(name) {
		return abs == name || strings.HasPrefix(abs, name+string(filepath.Separator))
	}
	sep := string(filepath.Separator)
	return strings.HasSuffix(abs, sep+name) || strings.Contains(abs+sep, sep+name+sep)
}

// decideBash follows tools.bash and, under "ask", the approval rules.
func decideBash(c Call, p Policy) Decision {
	if c.Asked && p.bash() == config.PolicyAsk {
		// The user approved it at a hook's request: not asked again.
		return Decision{Verdict: Allow, Approved: true}
	}
	switch p.bash() {
	case config.PolicyAllow:
		return Decision{Verdict: Allow}
	case config.PolicyDeny:
		return Decision{Verdict: Refuse, Why: `tool error: bash is disabled here (tools.bash = "deny"); do without running commands`}
	}
	var args struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal([]byte(c.Arguments), &args)
	cmd := cmdrules.Parse(args.Command, p.Root)
	if ok, by := cmdrules.Match(p.Rules, cmd, p.Root); ok {
		return Decision{Verdict: Approve, Why: "allowed by the rule " + ruleWords(by), Command: args.Command}
	}
	d := Decision{Verdict: Ask, Command: args.Command}
	d.Exact, d.Prefix = cmdrules.Suggest(p.Rules, cmd, p.Root)
	return d
}

// decideMCP follows the server's approve policy and, under "ask", the
// servers the user allowed.
func decideMCP(c Call, p Policy) Decision {
	switch p.mcp(c.Server) {
	case config.PolicyAllow:
		return Decision{Verdict: Allow, Approved: c.Asked}
	case config.PolicyDeny:
		return Decision{Verdict: Refuse, Why: fmt.Sprintf(`tool error: the tools of MCP server %q are disabled here (mcp.servers.%s.approve = "deny"); do without them`, c.Server, c.Server)}
	}
	if slices.Contains(p.Servers, c.Server) {
		return Decision{Verdict: Allow, Approved: c.Asked}
	}
	return Decision{Verdict: Ask, Approved: c.Asked}
}

// ruleWords names the rules that allowed a command.
func ruleWords(rs []cmdrules.Rule) string {
	words := make([]string, len(rs))
	for i, r := range rs {
		words[i] = r.String()
	}
	return strings.Join(words, " and ")
}

// bash is Bash with "" read as "ask".
func (p Policy) bash() config.Policy {
	if p.Bash == "" {
		return config.PolicyAsk
	}
	return p.Bash
}

// mcp is the approve policy of server, "ask" when not listed.
func (p Policy) mcp(server string) config.Policy {
	if pol, ok := p.MCP[server]; ok && pol != "" {
		return pol
	}
	return config.PolicyAsk
}

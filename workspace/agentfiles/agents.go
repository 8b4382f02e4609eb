package agentfiles

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	yaml "go.yaml.in/yaml/v4"
)

// Agent definitions: the subagents a conversation may hand a task to,
// read unchanged from the formats users already have.
//
//   - Claude Code: .claude/agents/*.md and ~/.claude/agents/*.md (YAML
//     front matter name, description, tools, disallowedTools, model; the
//     body is the instructions);
//   - Codex: .codex/agents/*.toml and ~/.codex/agents/*.toml (name,
//     description, developer_instructions, model, sandbox_mode);
//   - VS Code / GitHub Copilot: .github/agents/*.agent.md and
//     ~/.copilot/agents/*.agent.md (front matter name — else the file's
//     name —, description, tools as a list, model);
//   - loom's own: .loom/agents/*.md and agents/*.md in loom's user
//     configuration directory, in Claude Code's format, tools named by
//     loom's names or any of the aliases below.
//
// A definition never gives a child more than its parent: its tools are an
// allow-list taken within the parent's, its read-only flag only narrows.
// Keys loom does not use are named (Agent.Ignored), never fatal.

// maxAgentBytes bounds a definition file read.
const maxAgentBytes = 256 << 10

// Agent scopes: where a definition comes from.
const (
	ScopeBuiltin    = "builtin"
	ScopeRepository = "repository"
	ScopeUser       = "user"
)

// Agent formats.
const (
	FormatClaude = "claude"
	FormatCodex  = "codex"
	FormatVSCode = "vscode"
	FormatLoom   = "loom"
)

// Agent is one agent definition.
type Agent struct {
	// Name is what the model names it by (unique among the agents,
	// letter case ignored).
	Name string `json:"name"`
	// Description says what it is for; the model reads it.
	Description string `json:"description"`
	// Tools is the allow-list of loom tool names (aliases mapped), nil
	// for all the parent's tools. MCP names "server__*" stand for every
	// tool of that server.
	Tools []string `json:"tools,omitempty"`
	// Disallowed are loom tool names taken out (disallowedTools).
	Disallowed []string `json:"disallowed,omitempty"`
	// ReadOnly asks for a read-only child (Codex sandbox_mode =
	// "read-only", the built-in researcher): it only narrows.
	ReadOnly bool `json:"readOnly,omitempty"`
	// Unasked says the definition asks to run without the user's
	// approvals (Claude Code's permissionMode: bypassPermissions): the
	// child asks for every permission and gets only its parent's
	// (toolcall.Policy.Narrow), never more.
	Unasked bool `json:"unasked,omitempty"`
	// Model is the model it asks for as written ("" or "inherit": the
	// parent's).
	Model string `json:"model,omitempty"`
	// Instructions are the child's instructions (body or
	// developer_instructions).
	Instructions string `json:"-"`
	// Path is the file it comes from ("" for a built-in); Scope and
	// Format say which kind.
	Path   string `json:"path,omitempty"`
	Scope  string `json:"scope"`
	Format string `json:"format"`
	// Ignored names what of the file loom does not use: keys ("color")
	// and tool names it does not know ("tools: NotebookEdit").
	Ignored []string `json:"ignored,omitempty"`
	// Fingerprint binds a repository definition to its content (trust).
	Fingerprint string `json:"-"`
}

// ResearcherTools are the built-in researcher's tools.
var ResearcherTools = []string{"read_file", "list_files", "grep"}

// Builtin are the agents every conversation has: a read-only researcher
// and a worker with the parent's tools.
func Builtin() []Agent {
	return []Agent{
		{Name: "researcher", Scope: ScopeBuiltin, Format: FormatLoom, ReadOnly: true, Tools: slices.Clone(ResearcherTools),
			Description:  "Read-only research: finds and reads code to answer a question (read_file, list_files, grep; no commands, no writes). Use it for exploring the codebase; several run in parallel.",
			Instructions: "You are a research assistant working for another agent. Find what the task asks by reading the workspace (read_file, list_files, grep). You cannot change files or run commands. End with a concise, complete answer: it is all the other agent will see."},
		{Name: "worker", Scope: ScopeBuiltin, Format: FormatLoom,
			Description:  "A general worker with the same tools as you, for a self-contained task; it asks the user as you would.",
			Instructions: "You are a worker agent doing one task for another agent. Do the task with the tools you have, then end with a concise report of what you did and found: it is all the other agent will see."},
	}
}

// agentDir is a place definitions are read from.
type agentDir struct {
	dir, suffix, format string
}

// RepositoryAgentDirs and UserAgentDirs are where definitions are read,
// in order; the user's win over the repository's of the same name.
var (
	RepositoryAgentDirs = []agentDir{{".loom/agents", ".md", FormatLoom}, {".claude/agents", ".md", FormatClaude}, {".codex/agents", ".toml", FormatCodex}, {".github/agents", ".agent.md", FormatVSCode}}
	UserAgentDirs       = []agentDir{{".claude/agents", ".md", FormatClaude}, {".codex/agents", ".toml", FormatCodex}, {".copilot/agents", ".agent.md", FormatVSCode}}
)

// Agents finds the agent definitions: the built-ins, the folder's, and
// the user's (home, and loom's user configuration directory userDir;
// "" for none), sorted by name with the built-ins first. A definition
// with a built-in's name, or a repository's whose name the user's also
// defines, is not taken and named among the problems.
func Agents(folder, home, userDir string) ([]Agent, []Problem) {
	set := agentSet{folder: folder, found: Builtin(), byName: map[string]int{}}
	for i, a := range set.found {
		set.byName[strings.ToLower(a.Name)] = i
	}
	for _, d := range RepositoryAgentDirs {
		set.read(folder, d, ScopeRepository)
	}
	if home != "" {
		for _, d := range UserAgentDirs {
			set.read(home, d, ScopeUser)
		}
	}
	if userDir != "" {
		set.read(userDir, agentDir{"agents", ".md", FormatLoom}, ScopeUser)
	}
	builtins := len(Builtin())
	slices.SortFunc(set.found[builtins:], func(a, b Agent) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	return set.found, set.problems
}

// agentSet is the agents found so far, by name, and the problems met.
type agentSet struct {
	folder   string
	found    []Agent
	byName   map[string]int // lower-cased name → index in found
	problems []Problem
}

// add adds a, unless its name is taken: a built-in's name is refused, a
// user's agent replaces the repository's of the same name, any other
// duplicate is refused.
func (set *agentSet) add(a Agent) {
	key := strings.ToLower(a.Name)
	i, dup := set.byName[key]
	switch {
	case !dup:
		set.byName[key] = len(set.found)
		set.found = append(set.found, a)
	case set.found[i].Scope == ScopeBuiltin:
		set.problems = append(set.problems, Problem{Path: a.Path, Reason: fmt.Sprintf("agent %q is a built-in agent's name", a.Name)})
	case a.Scope == ScopeUser && set.found[i].Scope == ScopeRepository:
		set.problems = append(set.problems, Problem{Path: set.found[i].Path, Reason: fmt.Sprintf("agent %q is also the user's (%s): the user's is used", a.Name, a.Path)})
		set.found[i] = a
	default:
		set.problems = append(set.problems, Problem{Path: a.Path, Reason: fmt.Sprintf("agent %q is already defined by %s", a.Name, set.found[i].Path)})
	}
}

// read reads the definitions of directory d under root, of scope.
func (set *agentSet) read(root string, d agentDir, scope string) {
	base := filepath.Join(root, d.dir)
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), d.suffix) || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(base, e.Name())
		a, prob := ReadAgent(path, d.format, scope)
		if prob != nil {
			set.problems = append(set.problems, *prob)
			continue
		}
		if scope == ScopeRepository {
			a.Fingerprint = agentFingerprint(set.folder, path)
		}
		set.add(a)
	}
}

// Find returns the agent named name (letter case ignored).
func Find(agents []Agent, name string) (Agent, bool) {
	for _, a := range agents {
		if strings.EqualFold(a.Name, strings.TrimSpace(name)) {
			return a, true
		}
	}
	return Agent{}, false
}

// agentFingerprint hashes a repository definition's path (relative to
// the folder) and bytes: the definition trust binds.
func agentFingerprint(folder, path string) string {
	sum := sha256.New()
	rel, err := filepath.Rel(folder, path)
	if err != nil {
		rel = path
	}
	fmt.Fprintf(sum, "agent\x00%s\x00", filepath.ToSlash(rel))
	if data, err := os.ReadFile(path); err == nil {
		sum.Write(data)
	}
	return hex.EncodeToString(sum.Sum(nil))[:32]
}

// ReadAgent reads one definition file of format (FormatClaude,
// FormatLoom, FormatVSCode: Markdown with front matter; FormatCodex:
// TOML).
func ReadAgent(path, format, scope string) (Agent, *Problem) {
	st, err := os.Lstat(path)
	if err != nil {
		return Agent{}, &Problem{Path: path, Reason: err.Error()}
	}
	if !st.Mode().IsRegular() {
		return Agent{}, &Problem{Path: path, Reason: "not a regular file"}
	}
	if st.Size() > maxAgentBytes {
		return Agent{}, &Problem{Path: path, Reason: fmt.Sprintf("%d bytes, over the %d-byte limit", st.Size(), maxAgentBytes)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Agent{}, &Problem{Path: path, Reason: err.Error()}
	}
	a := Agent{Path: path, Scope: scope, Format: format}
	var prob *Problem
	if format == FormatCodex {
		prob = a.readCodex(data)
	} else {
		prob = a.readMarkdown(data)
	}
	if prob != nil {
		prob.Path = path
		return Agent{}, prob
	}
	switch {
	case a.Name == "":
		return Agent{}, &Problem{Path: path, Line: 1, Reason: "the definition has no name"}
	case a.Description == "":
		return Agent{}, &Problem{Path: path, Line: 1, Reason: "the definition has no description"}
	case len(a.Name) > 64:
		return Agent{}, &Problem{Path: path, Line: 1, Reason: fmt.Sprintf("name of %d characters, over 64", len(a.Name))}
	}
	return a, nil
}

// markdownKeys are the front-matter keys loom uses.
var markdownKeys = []string{"name", "description", "tools", "disallowedTools", "model"}

// readMarkdown reads a Markdown definition: YAML front matter, body =
// instructions.
func (a *Agent) readMarkdown(data []byte) *Problem {
	head, body, p := splitFrontMatter(data)
	if p != nil {
		return p
	}
	a.Instructions = strings.TrimSpace(body)
	m, p := frontMatterMap(head)
	if p != nil {
		return p
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		a.readKey(m.Content[i], m.Content[i+1])
	}
	if a.Name == "" && a.Format == FormatVSCode {
		a.Name = strings.TrimSuffix(filepath.Base(a.Path), ".agent.md")
	}
	return nil
}

// splitFrontMatter splits a Markdown definition (BOM and CRLF line ends
// allowed) into its front matter, between its --- lines, and its body.
func splitFrontMatter(data []byte) (head, body string, p *Problem) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return "", "", &Problem{Line: 1, Reason: "no front matter (--- lines at the top)"}
	}
	if end := strings.Index(rest, "\n---\n"); end >= 0 {
		return rest[:end], rest[end+5:], nil
	}
	if head, ok := strings.CutSuffix(rest, "\n---"); ok {
		return head, "", nil
	}
	return "", "", &Problem{Line: 1, Reason: "the front matter is not closed by a --- line"}
}

// frontMatterMap parses the front matter's YAML: a map of keys.
func frontMatterMap(head string) (*yaml.Node, *Problem) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(head), &doc); err != nil {
		return nil, &Problem{Line: 1, Reason: "front matter: " + err.Error()}
	}
	if len(doc.Content) == 0 {
		return nil, &Problem{Line: 1, Reason: "the front matter is empty"}
	}
	if m := doc.Content[0]; m.Kind == yaml.MappingNode {
		return m, nil
	}
	return nil, &Problem{Line: 2, Reason: "the front matter is not a map of keys"}
}

// readKey reads one key of the front matter and its value v; a key loom
// does not use is noted in Ignored.
func (a *Agent) readKey(k, v *yaml.Node) {
	line := k.Line + 1 // the --- line comes first
	switch k.Value {
	case "name":
		a.Name = strings.TrimSpace(v.Value)
	case "description":
		a.Description = strings.Join(strings.Fields(v.Value), " ")
	case "tools":
		a.Tools = a.mapTools(nodeList(v))
		if a.Tools == nil {
			a.Tools = []string{} // "tools: []": none
		}
	case "disallowedTools":
		a.Disallowed = a.mapTools(nodeList(v))
	case "permissionMode":
		a.permissionMode(v.Value, line)
	case "model":
		if v.Kind == yaml.SequenceNode && len(v.Content) > 0 {
			a.Model = v.Content[0].Value // VS Code's fallback list: the first
		} else {
			a.Model = v.Value
		}
	default:
		a.Ignored = append(a.Ignored, fmt.Sprintf("%s (line %d)", k.Value, line))
	}
}

// nodeList is a YAML value as a list of words: a sequence, or a string
// of comma-separated names (Claude Code's "Read, Grep, Glob").
func nodeList(v *yaml.Node) []string {
	var out []string
	switch v.Kind {
	case yaml.SequenceNode:
		for _, c := range v.Content {
			out = append(out, strings.TrimSpace(c.Value))
		}
	case yaml.ScalarNode:
		for _, w := range strings.Split(v.Value, ",") {
			if w = strings.TrimSpace(w); w != "" {
				out = append(out, w)
			}
		}
	}
	return out
}

// codexAgent is Codex's custom agent file.
type codexAgent struct {
	Name                  string `toml:"name"`
	Description           string `toml:"description"`
	DeveloperInstructions string `toml:"developer_instructions"`
	Model                 string `toml:"model"`
	SandboxMode           string `toml:"sandbox_mode"`
}

// permissionMode reads Claude Code's permissionMode: plan asks for a
// read-only child, bypassPermissions for every permission (both only
// narrowed by the parent's); the others are named as ignored.
func (a *Agent) permissionMode(mode string, line int) {
	switch mode {
	case "plan":
		a.ReadOnly = true
	case "bypassPermissions":
		a.Unasked = true
	default:
		a.Ignored = append(a.Ignored, fmt.Sprintf("permissionMode: %s (line %d)", mode, line))
	}
}

// readCodex reads a Codex TOML definition.
func (a *Agent) readCodex(data []byte) *Problem {
	var c codexAgent
	md, err := toml.Decode(string(data), &c)
	if err != nil {
		line := 0
		if pe, ok := err.(toml.ParseError); ok {
			line = pe.Position.Line
		}
		return &Problem{Line: line, Reason: err.Error()}
	}
	a.Name, a.Description, a.Model = strings.TrimSpace(c.Name), strings.Join(strings.Fields(c.Description), " "), c.Model
	a.Instructions = strings.TrimSpace(c.DeveloperInstructions)
	switch c.SandboxMode {
	case "read-only":
		a.ReadOnly = true
	case "", "workspace-write":
	default:
		// danger-full-access and others: never more than the parent.
		a.Ignored = append(a.Ignored, fmt.Sprintf("sandbox_mode = %q (a child has its parent's sandbox)", c.SandboxMode))
	}
	for _, k := range md.Undecoded() {
		if len(k) > 0 && !slices.Contains(a.Ignored, k[0]) {
			a.Ignored = append(a.Ignored, k[0])
		}
	}
	if a.Instructions == "" {
		return &Problem{Line: 1, Reason: "the definition has no developer_instructions"}
	}
	return nil
}

// toolAliases maps the formats' tool names (letter case ignored) to
// loom's. A name found nowhere is named in Agent.Ignored.
var toolAliases = map[string][]string{
	// loom's own names.
	"read_file": {"read_file"}, "list_files": {"list_files"}, "grep": {"grep"}, "edit_file": {"edit_file"},
	"write_file": {"write_file"}, "bash": {"bash"}, "update_plan": {"update_plan"}, "skill": {"skill"},
	"web_fetch": {"web_fetch"}, "agent": {"agent"},
	// Claude Code.
	"read": {"read_file"}, "glob": {"list_files"}, "ls": {"list_files"}, "edit": {"edit_file", "write_file"},
	"multiedit": {"edit_file"}, "write": {"write_file"}, "webfetch": {"web_fetch"}, "todowrite": {"update_plan"},
	"task": {"agent"},
	// VS Code / GitHub Copilot.
	"search": {"grep", "list_files"}, "codebase": {"grep", "list_files", "read_file"}, "execute": {"bash"},
	"shell": {"bash"}, "runcommands": {"bash"}, "runinterminal": {"bash"}, "terminal": {"bash"},
	"editfiles": {"edit_file", "write_file"}, "createfile": {"write_file"}, "fetch": {"web_fetch"}, "web": {"web_fetch"},
	"todo": {"update_plan"}, "todos": {"update_plan"}, "runsubagent": {"agent"}, "custom-agent": {"agent"},
	"readfile": {"read_file"}, "listdirectory": {"list_files"}, "filesearch": {"list_files"}, "textsearch": {"grep"},
}

// mapTools maps names to loom's tool names, in order, without
// duplicates; an MCP reference "server/*" or "server/tool" becomes
// "server__*" / "server__tool". Unknown names go to Ignored.
func (a *Agent) mapTools(names []string) []string {
	var out []string
	add := func(n string) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range names {
		if n == "" {
			continue
		}
		if server, tool, ok := strings.Cut(n, "/"); ok && server != "" {
			// VS Code "github/*", "read/readFile" (a tool set's member).
			if mapped, known := toolAliases[strings.ToLower(tool)]; known {
				for _, m := range mapped {
					add(m)
				}
				continue
			}
			if mapped, known := toolAliases[strings.ToLower(server)]; known && tool == "*" {
				for _, m := range mapped {
					add(m)
				}
				continue
			}
			add(server + "__" + tool)
			continue
		}
		if mcpName, ok := strings.CutPrefix(n, "mcp__"); ok {
			// Claude Code's mcp__server__tool is loom's server__tool.
			add(mcpName)
			continue
		}
		mapped, known := toolAliases[strings.ToLower(n)]
		if !known {
			a.Ignored = append(a.Ignored, "tool "+n)
			continue
		}
		for _, m := range mapped {
			add(m)
		}
	}
	return out
}

// Allows reports whether the definition lets its child use the tool
// named tool (a loom tool name; an MCP tool "server__name").
func (a Agent) Allows(tool string) bool {
	if slices.Contains(a.Disallowed, tool) {
		return false
	}
	if a.ReadOnly && a.Scope == ScopeBuiltin && !slices.Contains(a.Tools, tool) {
		return false
	}
	if a.Tools == nil {
		return true
	}
	for _, t := range a.Tools {
		if t == tool {
			return true
		}
		if server, ok := strings.CutSuffix(t, "__*"); ok && strings.HasPrefix(tool, server+"__") {
			return true
		}
	}
	return false
}

// AgentsListing is the agent tool's list of agents the model reads:
// names and descriptions within budget bytes.
func AgentsListing(agents []Agent, budget int) string {
	var b strings.Builder
	for _, a := range agents {
		ro := ""
		if a.ReadOnly {
			ro = " (read-only)"
		}
		line := fmt.Sprintf("- %s%s: %s\n", a.Name, ro, oneLine(a.Description))
		if b.Len()+len(line) > budget {
			fmt.Fprintf(&b, "(more agents not listed for space)\n")
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

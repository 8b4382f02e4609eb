package workspace

import (
	"context"

	"encoding/json"
	"fmt"
	"github.com/loom-lsp/loom-lsp/config"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/agentfiles"
)

// agentFiles is what the folder's and the user's skills and custom
// commands give the conversations (package agentfiles reads them).
type agentFiles struct {
	skills   []agentfiles.Skill
	commands []agentfiles.Command
	// notice names the files not taken, "" when none.
	notice string
	// stopHooks: Stop hooks are defined (agenthooks.go).
	stopHooks bool
	// agents are the agent definitions the agent tool offers: the
	// built-ins, the user's, and the repository's that trust admits
	// (subagent_defs.go).
	agents []agentfiles.Agent
}

// readAgentFiles reads the skills and commands of the folder and of the
// user (home from the environment; none in tests that isolate it).
func (f *Folder) readAgentFiles(cfg config.Config) agentFiles {
	home := f.host.opts.Getenv("HOME")
	skills, problems := agentfiles.Skills(f.dir, home)
	commands, more := agentfiles.Commands(f.dir, home, skills)
	problems = append(problems, more...)
	af := agentFiles{skills: skills, commands: commands}
	if len(problems) > 0 {
		lines := make([]string, 0, len(problems))
		for _, p := range problems {
			lines = append(lines, "  "+p.String())
		}
		af.notice = "skills and commands ignored:\n" + strings.Join(lines, "\n")
	}
	agents, lines := f.readAgents(cfg)
	af.agents = agents
	if n := agentsNotice(lines); n != "" {
		af.notice = strings.TrimPrefix(af.notice+"\n"+n, "\n")
	}
	return af
}

// skillBudget is the share of the context window the skill listing may
// take (as Codex does: 2 %), in bytes, between 2 and 16 KiB.
func skillBudget(windowTokens int) int {
	return min(max(windowTokens*4/50, 2<<10), 16<<10)
}

// expandCommand is the prompt a "/name args" prompt stands for; other
// prompts are returned as they are. An unknown /name is an error, never
// sent to the model as text.
func (s *Conversation) expandCommand(prompt string) (string, error) {
	name, args, ok := agentfiles.ParseCall(prompt)
	if !ok {
		return prompt, nil
	}
	for _, c := range s.agent.commands {
		if c.Name == name {
			return c.Expand(args)
		}
	}
	known := make([]string, 0, len(s.agent.commands))
	for _, c := range s.agent.commands {
		known = append(known, "/"+c.Name)
	}
	if len(known) == 0 {
		return "", fmt.Errorf("unknown command /%s: this folder has no custom commands (.claude/commands/*.md, .github/prompts/*.prompt.md, .loom/commands/*.md, ~/.codex/prompts/*.md, or a skill)", name)
	}
	return "", fmt.Errorf("unknown command /%s; the commands are: %s", name, strings.Join(known, " "))
}

// CustomCommands lists the folder's custom commands (and user-invocable
// skills), for the front ends' slash menus. Safe on any goroutine.
func (f *Folder) CustomCommands() []agentfiles.Command {
	f.mu.Lock()
	cmds := append([]agentfiles.Command(nil), f.current.agent.commands...)
	f.mu.Unlock()
	return append(cmds, mcpPromptCommands(f.mcp)...)
}

// skillTool is the `skill` tool: the model loads a skill's instructions,
// and reads its bundled files, by name. It reads the folder's skills as
// last loaded (any goroutine), so that its description, which the model
// reads in every request, stays the same whatever the skills.
type skillTool struct {
	skills *atomic.Pointer[[]agentfiles.Skill]
}

type skillParams struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
}

func (skillTool) Name() string { return "skill" }

func (t skillTool) Description() string {
	return "Loads an Agent Skill listed in the system prompt under Skills: its instructions and the list of its bundled files. With file, returns that bundled file instead (a path relative to the skill's directory). Scripts a skill bundles run with bash like any command."
}

func (skillTool) Mutating() bool { return false }

func (t skillTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the skill's name"},"file":{"type":"string","description":"optional: a bundled file, relative to the skill's directory"}},"required":["name"],"additionalProperties":false}`)
}

// maxSkillFileBytes bounds a bundled file returned to the model.
const maxSkillFileBytes = 256 << 10

func (t skillTool) Run(ctx context.Context, _ *tools.Env, args json.RawMessage) (tools.Result, error) {
	var p skillParams
	if err := json.Unmarshal(args, &p); err != nil {
		return tools.Result{Text: "tool error: skill: " + err.Error(), IsError: true}, nil
	}
	var skills []agentfiles.Skill
	if ps := t.skills.Load(); ps != nil {
		skills = *ps
	}
	var sk *agentfiles.Skill
	for i := range skills {
		if skills[i].Name == p.Name {
			sk = &skills[i]
		}
	}
	if sk == nil {
		names := make([]string, len(skills))
		for i, s := range skills {
			names[i] = s.Name
		}
		return tools.Result{Text: fmt.Sprintf("tool error: skill: no skill %q; the skills are: %s", p.Name, strings.Join(names, ", ")), IsError: true}, nil
	}
	if p.File == "" {
		body, files, err := sk.Body()
		if err != nil {
			return tools.Result{Text: "tool error: skill: " + err.Error(), IsError: true}, nil
		}
		text := fmt.Sprintf("Skill %s (%s)\n\n%s\n", sk.Name, sk.Path, body)
		if len(files) > 0 {
			text += "\nBundled files (read them with skill {name, file}; run its scripts with bash, from " + sk.Dir + "):\n  " + strings.Join(files, "\n  ") + "\n"
		}
		return tools.Result{Text: text, Summary: "loaded skill " + sk.Name}, nil
	}
	data, err := readBeneath(sk.Dir, p.File)
	if err != nil {
		return tools.Result{Text: fmt.Sprintf("tool error: skill %s: %v", sk.Name, err), IsError: true}, nil
	}
	return tools.Result{Text: string(data), Summary: fmt.Sprintf("read %s of skill %s", p.File, sk.Name)}, nil
}

// readBeneath reads rel inside dir, refusing a path that leaves it (by
// .. or a symbolic link) and a file over maxSkillFileBytes.
func readBeneath(dir, rel string) ([]byte, error) {
	if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("%q is not a path inside the skill", rel)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(dir, rel))
	if err != nil {
		return nil, err
	}
	if r, err := filepath.Rel(root, real); err != nil || !filepath.IsLocal(r) {
		return nil, fmt.Errorf("%q leads outside the skill", rel)
	}
	// Opened as checked: a directory of real swapped for a symbolic link
	// since leads nowhere (tools.OpenResolved).
	f, err := tools.OpenResolved(real)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%q is not a regular file", rel)
	}
	if st.Size() > maxSkillFileBytes {
		return nil, fmt.Errorf("%q is %d bytes, over the %d-byte limit", rel, st.Size(), maxSkillFileBytes)
	}
	return io.ReadAll(io.LimitReader(f, maxSkillFileBytes))
}

// skillListing is the system prompt's list of skills, within the budget.
func (s *Conversation) skillListing() string {
	window, _ := s.contextWindow()
	text, _ := agentfiles.Listing(s.agent.skills, skillBudget(window))
	return text
}

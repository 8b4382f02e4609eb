package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loom-lsp/loom-lsp/tools"
)

// PromptPrefix starts the slash command of a server's prompt:
// "/mcp.<server>.<prompt> args".
const PromptPrefix = "mcp."

// Prompt is a ready server's prompt, offered to the user as a slash
// command named Command ("mcp.<server>.<prompt>", without the slash).
type Prompt struct {
	Command     string
	Server      string
	Name        string
	Description string
	// Arguments are the prompt's arguments, in the server's order.
	Arguments []PromptArgument
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name, Description string
	Required          bool
}

// Hint is the arguments as a slash menu shows them: "name [optional]".
func (p Prompt) Hint() string {
	var parts []string
	for _, a := range p.Arguments {
		if a.Required {
			parts = append(parts, a.Name)
		} else {
			parts = append(parts, "["+a.Name+"]")
		}
	}
	return strings.Join(parts, " ")
}

// Prompts lists the prompts of the ready servers, sorted by command.
func (m *Manager) Prompts() []Prompt {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Prompt
	for _, srv := range m.servers {
		if srv.state != StateReady {
			continue
		}
		for _, p := range srv.prompts {
			pr := Prompt{Command: PromptPrefix + srv.spec.Name + "." + p.Name, Server: srv.spec.Name, Name: p.Name, Description: p.Description}
			if pr.Description == "" {
				pr.Description = p.Title
			}
			for _, a := range p.Arguments {
				pr.Arguments = append(pr.Arguments, PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
			}
			out = append(out, pr)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Command < out[j].Command })
	return out
}

// ExpandPrompt is the text a "/mcp.<server>.<prompt> args" prompt stands
// for, got from the server (prompts/get); ok is false for any other
// text. args are the prompt's arguments in order, whitespace-separated
// (the last takes the rest of the line), or name=value.
func (m *Manager) ExpandPrompt(ctx context.Context, text string) (out string, ok bool, err error) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/"+PromptPrefix) {
		return "", false, nil
	}
	cmd, rest, _ := strings.Cut(text[1:], " ")
	var p *Prompt
	all := m.Prompts()
	for i := range all {
		if all[i].Command == cmd {
			p = &all[i]
		}
	}
	if p == nil {
		names := make([]string, len(all))
		for i, q := range all {
			names[i] = "/" + q.Command
		}
		if len(names) == 0 {
			return "", true, fmt.Errorf("unknown command /%s: no ready MCP server offers prompts", cmd)
		}
		return "", true, fmt.Errorf("unknown command /%s; the MCP prompts are: %s", cmd, strings.Join(names, " "))
	}
	args, err := promptArgs(*p, strings.TrimSpace(rest))
	if err != nil {
		return "", true, err
	}
	m.mu.Lock()
	srv := m.servers[p.Server]
	m.mu.Unlock()
	cs, state := srv.currentSession()
	if cs == nil {
		return "", true, fmt.Errorf("MCP server %q is %s", p.Server, state)
	}
	ctx, cancel := context.WithTimeout(ctx, srv.timeout())
	defer cancel()
	res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: p.Name, Arguments: args})
	if err != nil {
		return "", true, fmt.Errorf("/%s: %w", cmd, err)
	}
	return promptText(res), true, nil
}

// promptArgs maps the words after the command to the prompt's arguments.
func promptArgs(p Prompt, rest string) (map[string]string, error) {
	args := map[string]string{}
	var positional []string
	for w := range strings.FieldsSeq(rest) {
		if k, v, found := strings.Cut(w, "="); found && p.has(k) {
			args[k] = v
			continue
		}
		positional = append(positional, w)
	}
	var free []PromptArgument
	for _, a := range p.Arguments {
		if _, set := args[a.Name]; !set {
			free = append(free, a)
		}
	}
	for i, w := range positional {
		if len(free) == 0 {
			return nil, fmt.Errorf("/%s takes %d arguments (%s); %q is one too many", p.Command, len(p.Arguments), p.Hint(), w)
		}
		if i == len(free)-1 { // the last takes the rest of the line
			args[free[i].Name] = strings.Join(positional[i:], " ")
			break
		}
		args[free[i].Name] = w
	}
	var missing []string
	for _, a := range p.Arguments {
		if _, set := args[a.Name]; a.Required && !set {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("/%s needs %s (usage: /%s %s)", p.Command, strings.Join(missing, ", "), p.Command, p.Hint())
	}
	return args, nil
}

func (p Prompt) has(name string) bool {
	for _, a := range p.Arguments {
		if a.Name == name {
			return true
		}
	}
	return false
}

// promptText renders a prompt's messages as the user's prompt: one
// user message is its text; several are each headed by their role.
func promptText(res *sdk.GetPromptResult) string {
	if len(res.Messages) == 1 && res.Messages[0].Role == "user" {
		return contentText(res.Messages[0].Content)
	}
	var parts []string
	for _, m := range res.Messages {
		parts = append(parts, fmt.Sprintf("[%s]\n%s", m.Role, contentText(m.Content)))
	}
	return strings.Join(parts, "\n\n")
}

func contentText(c sdk.Content) string {
	return resultText(&sdk.CallToolResult{Content: []sdk.Content{c}})
}

// resourceToolName is the name of a server's resource reader.
const resourceToolName = "read_resource"

// maxListedResources bounds the resources named in the reader's
// description.
const maxListedResources = 25

// resourceTool is the tool through which the model reads a server's
// resources (resources/read); its description lists them.
func resourceTool(srv *server, resources []*sdk.Resource, templates []*sdk.ResourceTemplate) *Tool {
	var b strings.Builder
	fmt.Fprintf(&b, "Reads a resource of MCP server %s by its URI (resources/read). ", srv.spec.Name)
	for i, r := range resources {
		if i == maxListedResources {
			fmt.Fprintf(&b, "\n… and %d more.", len(resources)-i)
			break
		}
		fmt.Fprintf(&b, "\n- %s", r.URI)
		if r.Name != "" {
			fmt.Fprintf(&b, " (%s)", r.Name)
		}
		if r.Description != "" {
			fmt.Fprintf(&b, ": %s", firstLine(r.Description))
		}
	}
	for i, t := range templates {
		if i == maxListedResources {
			fmt.Fprintf(&b, "\n… and %d more templates.", len(templates)-i)
			break
		}
		fmt.Fprintf(&b, "\n- %s (a template: fill in the {names})", t.URITemplate)
		if t.Description != "" {
			fmt.Fprintf(&b, ": %s", firstLine(t.Description))
		}
	}
	return &Tool{srv: srv, name: toolName(srv.spec.Name, resourceToolName), remote: resourceToolName, readOnly: true, resource: true,
		description: b.String(),
		schema:      json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string","description":"the resource's URI"}},"required":["uri"],"additionalProperties":false}`)}
}

// readResource runs a resource reader.
func (t *Tool) readResource(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(args, &p); err != nil || p.URI == "" {
		return t.toolError("want {\"uri\": \"…\"}"), nil
	}
	cs, state := t.srv.currentSession()
	if cs == nil {
		return t.toolError("MCP server %q is not running (%s)", t.srv.spec.Name, state), nil
	}
	ctx, cancel := context.WithTimeout(ctx, t.srv.timeout())
	defer cancel()
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: p.URI})
	if err != nil {
		return t.toolError("%v", err), nil
	}
	var parts []string
	for _, c := range res.Contents {
		parts = append(parts, embedded(c))
	}
	text := env.CapText(strings.Join(parts, "\n"))
	return tools.Result{Text: text, Summary: fmt.Sprintf("%s: %s, %d bytes", t.name, p.URI, len(text))}, nil
}

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loom-lsp/loom-lsp/tools"
)

// Separator joins a server's name and its tool's name: "github__search".
const Separator = "__"

// maxNameLen is the longest tool name OpenAI-compatible APIs accept.
const maxNameLen = 64

// Tool is one tool of an MCP server, offered to the model as
// "<server>__<tool>". It implements [tools.Tool].
type Tool struct {
	srv         *server
	name        string
	remote      string
	description string
	schema      json.RawMessage
	readOnly    bool
	// resource: the server's resource reader (resources/read), not one
	// of its tools.
	resource bool
}

var _ tools.Tool = (*Tool)(nil)

func newTool(srv *server, t *sdk.Tool) *Tool {
	tool := &Tool{
		srv:         srv,
		name:        toolName(srv.spec.Name, t.Name),
		remote:      t.Name,
		description: t.Description,
		readOnly:    t.Annotations != nil && t.Annotations.ReadOnlyHint,
	}
	if tool.description == "" && t.Annotations != nil {
		tool.description = t.Annotations.Title
	}
	tool.description = fmt.Sprintf("[MCP server %s, tool %s] %s", srv.spec.Name, t.Name, tool.description)
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || len(schema) == 0 || string(schema) == "null" || string(schema) == "{}" {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	tool.schema = schema
	return tool
}

// toolName is "<server>__<tool>" with what model APIs refuse in a name
// replaced by '_', at most maxNameLen bytes.
func toolName(server, tool string) string {
	var b strings.Builder
	for _, r := range tool {
		switch {
		case r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9'):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := server + Separator + b.String()
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
	}
	return name
}

// Name is "<server>__<tool>".
func (t *Tool) Name() string { return t.name }

// Description is the server's description of the tool, naming the server.
func (t *Tool) Description() string { return t.description }

// Schema is the tool's input JSON Schema, as the server gave it.
func (t *Tool) Schema() json.RawMessage { return t.schema }

// Mutating is true unless the server annotated the tool readOnlyHint.
func (t *Tool) Mutating() bool { return !t.readOnly }

// Server is the name of the tool's server.
func (t *Tool) Server() string { return t.srv.spec.Name }

// RemoteName is the tool's name on its server.
func (t *Tool) RemoteName() string { return t.remote }

// Run calls the tool on its server (tools/call), forwarding the server's
// progress notifications to env.Progress. Cancelling ctx cancels the
// call (notifications/cancelled); the server's per-call timeout applies.
// Errors the model can act on (isError, a bad argument, a timeout, a
// server that stopped) are tool errors.
func (t *Tool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	if t.resource {
		return t.readResource(ctx, env, args)
	}
	arguments, err := callArguments(args)
	if err != nil {
		return t.toolError("invalid arguments: want a JSON object (%v)", err), nil
	}
	cs, state := t.srv.currentSession()
	if cs == nil {
		return t.toolError("MCP server %q is not running (%s)", t.srv.spec.Name, state), nil
	}
	timeout := t.srv.timeout()
	// The timeout stops while a question of the server waits for the user.
	callCtx, clock, stop := startCallClock(ctx, timeout)
	defer stop()
	progress := make(chan string, 16)
	token, unwatch := t.srv.watchProgress(progress)
	defer unwatch()
	unwatchElicit := t.srv.watchElicit(env, progress, clock)
	defer unwatchElicit()
	params := &sdk.CallToolParams{Name: t.remote, Arguments: arguments}
	params.SetProgressToken(token)

	done := make(chan callOutcome, 1)
	go func() {
		res, err := cs.CallTool(callCtx, params)
		done <- callOutcome{res, err}
	}()
	var out callOutcome
	for waiting := true; waiting; {
		select {
		case msg := <-progress:
			if env.Progress != nil {
				env.Progress(msg)
			}
		case out = <-done:
			waiting = false
		}
	}
	// What came with the result (a URL's completion) is still said: once
	// unregistered, nothing more is sent to progress.
	unwatchElicit()
	for drained := false; !drained; {
		select {
		case msg := <-progress:
			if env.Progress != nil {
				env.Progress(msg)
			}
		default:
			drained = true
		}
	}
	return t.result(ctx, callCtx, clock, timeout, out, env)
}

// callArguments are a call's arguments as tools/call takes them: a JSON
// object; nothing (or null) is the empty object.
func callArguments(args json.RawMessage) (map[string]any, error) {
	var arguments map[string]any
	raw := bytes.TrimSpace(args)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	err := json.Unmarshal(raw, &arguments)
	return arguments, err
}

// callOutcome is what tools/call answered.
type callOutcome struct {
	res *sdk.CallToolResult
	err error
}

// result is the tool's result for a call that came to out: cancelled
// (ctx), timed out (callCtx, after timeout), failed (the server stopped,
// or said why), an error the tool reported, or its text; texts capped
// by env.
func (t *Tool) result(ctx, callCtx context.Context, clock *callClock, timeout time.Duration, out callOutcome, env *tools.Env) (tools.Result, error) {
	switch {
	case ctx.Err() != nil:
		return tools.Result{Text: "tool error: cancelled", IsError: true, Summary: t.name + ": cancelled"}, ctx.Err()
	case timedOut(callCtx):
		if w := clock.waited(); w > 0 {
			return t.toolError("no answer within %v, not counting the %v its question waited for the user (the call was cancelled)", timeout, w.Round(time.Second)), nil
		}
		return t.toolError("no answer within %v (the call was cancelled)", timeout), nil
	case out.err != nil:
		if _, st := t.srv.currentSession(); st != StateReady || errors.Is(out.err, sdk.ErrConnectionClosed) || errors.Is(out.err, io.EOF) {
			return t.toolError("MCP server %q stopped during the call: %v", t.srv.spec.Name, out.err), nil
		}
		return t.toolError("%v", out.err), nil
	}
	text := resultText(out.res)
	if out.res.IsError {
		text = env.CapText(text)
		return tools.Result{Text: "tool error: " + text, IsError: true, Summary: t.name + ": " + firstLine(text)}, nil
	}
	text = env.CapText(text)
	return tools.Result{Text: text, Summary: fmt.Sprintf("%s: %d bytes", t.name, len(text))}, nil
}

func (t *Tool) toolError(format string, args ...any) tools.Result {
	msg := fmt.Sprintf(format, args...)
	return tools.Result{Text: "tool error: " + t.name + ": " + msg, IsError: true, Summary: t.name + ": " + firstLine(msg)}
}

// resultText renders a tool result for the model: text as it is, images,
// audio and resources summarised, structured content as JSON when there
// is nothing else.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s <%s>%s]", c.Name, c.URI, mimeNote(c.MIMEType)))
		case *sdk.EmbeddedResource:
			parts = append(parts, embedded(c.Resource))
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 {
		return "(no content)"
	}
	return strings.Join(parts, "\n")
}

func embedded(r *sdk.ResourceContents) string {
	if r == nil {
		return "[resource]"
	}
	if r.Text != "" {
		return fmt.Sprintf("[resource <%s>%s]\n%s", r.URI, mimeNote(r.MIMEType), r.Text)
	}
	return fmt.Sprintf("[resource <%s>%s, %d bytes of binary data]", r.URI, mimeNote(r.MIMEType), len(r.Blob))
}

func mimeNote(m string) string {
	if m == "" {
		return ""
	}
	return " (" + m + ")"
}

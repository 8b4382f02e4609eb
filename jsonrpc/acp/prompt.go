package acp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// Prompt implements acpsdk.Agent: the prompt becomes one UserInput, and
// the answer comes when that turn ends, after all of its updates.
//
// ctx is not the turn's: the SDK cancels it on session/cancel (which
// Cancel handles, cancelling the turn; the turn then ends as cancelled)
// and when another prompt for the session arrives (that prompt is queued
// behind this one by the state machine, and this one runs to its end).
// So Prompt waits for the turn, never for ctx, and always answers with a
// result: returning ctx's error would make the SDK answer -32800.
func (a *agent) Prompt(ctx context.Context, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	run, err := a.startPrompt(ctx, p)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	return a.finishPrompt(run)
}

// promptRun is a prompt started: the turn it became, or the answer
// given at once (a slash command, /trust).
type promptRun struct {
	s        *session
	turn     uint64
	userID   string
	answered *acpsdk.PromptResponse
}

// startPrompt inserts the prompt: a slash command answered at once, or
// one UserInput of the session's conversation (a turn). Both versions'
// session/prompt start here (v2: promptV2).
func (a *agent) startPrompt(ctx context.Context, p acpsdk.PromptRequest) (promptRun, error) {
	s, err := a.liveSession(p.SessionId)
	if err != nil {
		return promptRun{}, err
	}
	text, images, err := promptText(a.host, s.folder, p.Prompt)
	if err != nil {
		return promptRun{}, err
	}
	slash := slashRun{a, s}
	if resp, handled := slash.slashTrust(ctx, text); handled {
		return promptRun{s: s, answered: &resp}, nil
	}
	if answer, ok := slash.slashCommand(context.WithoutCancel(ctx), text); ok {
		a.updates.send(s.id, acpsdk.UpdateAgentMessageText(answer))
		if err := a.out.flush(ctx); err != nil {
			return promptRun{}, err
		}
		return promptRun{s: s, answered: &acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}}, nil
	}
	sessionOut{a, s}.announceOnce(ctx)
	// The first prompt after session/new must offer the MCP servers'
	// tools: wait for those still starting (mcp.startup_timeout).
	if _, err := s.ws.WaitMCP(ctx); err != nil && ctx.Err() == nil {
		return promptRun{}, &acpsdk.RequestError{Code: -32603, Message: err.Error()}
	}
	a.commands.readvertise(s.id, s.ws) // the MCP servers' prompts, once ready
	turn, err := s.ws.AskWithImages(context.WithoutCancel(ctx), text, images)
	if errors.Is(err, workspace.ErrImage) {
		return promptRun{}, invalidParams("%v", err)
	}
	if err != nil {
		return promptRun{}, &acpsdk.RequestError{Code: -32603, Message: err.Error()}
	}
	return promptRun{s: s, turn: turn, userID: rewinds{a}.userMessageID(s, turn, p.MessageId)}, nil
}

// finishPrompt waits for the turn of run to end, after all of its
// updates were sent, and says how it ended as v1's session/prompt
// answers it.
func (a *agent) finishPrompt(run promptRun) (acpsdk.PromptResponse, error) {
	if run.answered != nil {
		return *run.answered, nil
	}
	s, turn, userID := run.s, run.turn, run.userID
	w := a.waitFor(turnKey{s.id, turn})
	select {
	case <-w.done:
	case <-s.ws.Done():
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	case <-a.client().Done():
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	}
	a.mu.Lock()
	delete(a.turns, turnKey{s.id, turn})
	a.mu.Unlock()
	switch w.outcome {
	case fsm.TurnDone:
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn, Usage: promptUsage(w.usage), UserMessageId: &userID}, nil
	case fsm.TurnCancelled:
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled, Usage: promptUsage(w.usage), UserMessageId: &userID}, nil
	}
	if isIterationGuard(w.err) {
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonMaxTurnRequests, Usage: promptUsage(w.usage), UserMessageId: &userID}, nil
	}
	msg := "the turn failed"
	var data map[string]any
	if w.err != nil {
		msg = w.err.Text
		data = map[string]any{"kind": string(w.err.Kind)}
	}
	return acpsdk.PromptResponse{}, &acpsdk.RequestError{Code: -32603, Message: msg, Data: data}
}

// promptUsage is a turn's token usage in ACP's (unstable) PromptResponse
// usage: input, output and total tokens, and the cached and thought
// tokens when the server reported them. nil when the turn reported no
// usage at all.
func promptUsage(u fsm.Usage) *acpsdk.Usage {
	if u.TotalTokens == 0 && u.PromptTokens == 0 && u.CompletionTokens == 0 {
		return nil
	}
	optional := func(n *int64) *int {
		if n == nil {
			return nil
		}
		v := int(*n)
		return &v
	}
	return &acpsdk.Usage{
		InputTokens: int(u.PromptTokens), OutputTokens: int(u.CompletionTokens), TotalTokens: int(u.TotalTokens),
		CachedReadTokens: optional(u.CachedTokens), ThoughtTokens: optional(u.ReasoningTokens),
	}
}

// isIterationGuard tells the state machine's iteration guard (the turn
// stopped after agent.max_iterations model requests) from a model error.
func isIterationGuard(n *workspace.ErrorReported) bool {
	return n != nil && n.Kind == fsm.ErrorOther && strings.Contains(n.Text, "agent.max_iterations")
}

// waitFor returns the wait of a turn, creating it.
func (a *agent) waitFor(k turnKey) *turnWait {
	a.mu.Lock()
	defer a.mu.Unlock()
	w, ok := a.turns[k]
	if !ok {
		w = &turnWait{done: make(chan struct{})}
		a.turns[k] = w
	}
	return w
}

// promptText turns a prompt's content blocks into the text of a
// UserInput, the way loom.ask's context does (workspace.PromptWithContext):
// the text blocks are the prompt; a resource_link to a file in the folder
// attaches that file (read from the open buffer or disk), any other link
// is named in a text item; an embedded text resource is attached as a
// text item labelled with its path, with the contents the client sent
// (its unsaved text). loom.history and session/load give the prompt back
// with these as chips.
func promptText(host *workspace.Host, folder string, blocks []acpsdk.ContentBlock) (string, []workspace.ImageInput, error) {
	var b strings.Builder
	var items []workspace.ContextItem
	var images []workspace.ImageInput
	for i, block := range blocks {
		switch {
		case block.Text != nil:
			b.WriteString(block.Text.Text)
		case block.ResourceLink != nil:
			items = append(items, linkItem(block.ResourceLink))
		case block.Resource != nil:
			item, err := resourceItem(i, block.Resource.Resource)
			if err != nil {
				return "", nil, err
			}
			items = append(items, item)
		case block.Image != nil:
			data, err := base64.StdEncoding.DecodeString(block.Image.Data)
			if err != nil {
				return "", nil, invalidParams("prompt block %d: the image's data is not base64: %v", i, err)
			}
			images = append(images, workspace.ImageInput{Name: fmt.Sprintf("image %d (prompt block %d)", len(images)+1, i), Data: data})
		case block.Audio != nil:
			return "", nil, invalidParams("prompt block %d: audio is not supported", i)
		default:
			return "", nil, invalidParams("prompt block %d: unknown content type", i)
		}
	}
	if strings.TrimSpace(b.String()) == "" && len(items) == 0 && len(images) == 0 {
		return "", nil, invalidParams("the prompt is empty")
	}
	// No MCP resource item comes from ACP: nothing here waits on a server.
	text, err := host.PromptWithContext(context.Background(), folder, b.String(), items)
	if err != nil {
		return "", nil, invalidParams("%v", err)
	}
	return text, images, nil
}

// linkItem is the context item of a resource_link: a file: link attaches
// the file, any other is named in a text item.
func linkItem(link *acpsdk.ContentBlockResourceLink) workspace.ContextItem {
	label := link.Name
	if link.Title != nil && *link.Title != "" {
		label = *link.Title
	}
	if u, err := url.Parse(link.Uri); err == nil && u.Scheme == "file" {
		return workspace.ContextItem{Kind: workspace.ContextFile, Path: u.Path, Label: label}
	}
	return workspace.ContextItem{Kind: workspace.ContextText, Label: label, Text: "link: " + link.Uri}
}

// resourceItem is the context item of prompt block i's embedded
// resource: a text resource, labelled with its path; a binary or empty
// one is refused.
func resourceItem(i int, res acpsdk.EmbeddedResourceResource) (workspace.ContextItem, error) {
	switch {
	case res.TextResourceContents != nil:
		return workspace.ContextItem{Kind: workspace.ContextText,
			Label: displayURI(res.TextResourceContents.Uri), Text: res.TextResourceContents.Text}, nil
	case res.BlobResourceContents != nil:
		return workspace.ContextItem{}, invalidParams("prompt block %d: binary resources are not supported (%s)", i, res.BlobResourceContents.Uri)
	}
	return workspace.ContextItem{}, invalidParams("prompt block %d: empty resource", i)
}

// displayURI shows a file: URI as its path, anything else as it is.
func displayURI(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Scheme == "file" {
		return u.Path
	}
	return uri
}

// errNoSession is returned to the workspace for a folder with no live
// ACP session (nobody to ask, nowhere to read or write).
var errNoSession = errors.New("no ACP session holds this folder")

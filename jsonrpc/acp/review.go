package acp

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// Review and rewind in ACP. Under tools.edits = "review" each proposed
// change is a session/request_permission whose tool call carries the diff
// (old and new text), before anything is written: Accept applies it,
// Reject (or a cancelled request) writes nothing. ACP editors cannot
// checkpoint an agent themselves, so /checkpoints and /rewind are slash
// commands (available_commands_update).

// The permission options of a review.
const (
	optionAccept = "accept"
	optionReject = "reject"
)

// slashCommands are the commands advertised to the client.
var slashCommands = []acpsdk.AvailableCommand{
	{Name: "checkpoints", Description: "list the turns you can rewind to"},
	{Name: "rewind", Description: "go back to before a turn: /rewind N [files|conversation|both] (default both)",
		Input: &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: "turn [files|conversation|both]"}}},
	{Name: "redo", Description: "undo the last rewind (until your next prompt)"},
	trustAvailable,   // trust.go
	keepAvailable,    // commandchanges.go
	discardAvailable, // commandchanges.go
}

// commandAds advertises the sessions' slash commands
// (available_commands_update).
type commandAds struct {
	watch   *responseWatch
	updates *updateQueue
	// last is the slash commands last sent to each session (their names,
	// joined), so a prompt re-sends them only when the MCP servers'
	// prompts changed them.
	last sync.Map // acpsdk.SessionId → string
}

// advertise sends the session's slash commands once the response of the
// request that names the session (session/new, load or resume) was
// written: a client drops, or hangs on, an update for a session it does
// not know yet.
//
// Beside loom's own, the folder's custom commands and user-invocable
// skills are offered (a name of loom's own keeps loom's meaning).
func (ads *commandAds) advertise(id acpsdk.SessionId, c *workspace.Conversation) {
	ads.watch.after(string(id), func() { ads.send(id, availableCommands(c)) })
}

// availableCommands are loom's slash commands, the folder's custom
// commands and user-invocable skills, and the ready MCP servers' prompts
// (a name of loom's own keeps loom's meaning).
func availableCommands(c *workspace.Conversation) []acpsdk.AvailableCommand {
	cmds := append([]acpsdk.AvailableCommand(nil), slashCommands...)
	for _, cc := range c.Folder().CustomCommands() {
		if slices.ContainsFunc(slashCommands, func(b acpsdk.AvailableCommand) bool { return b.Name == cc.Name }) {
			continue
		}
		ac := acpsdk.AvailableCommand{Name: cc.Name, Description: cc.Description}
		if ac.Description == "" {
			ac.Description = "custom command (" + cc.Scope + ")"
		}
		if cc.ArgumentHint != "" {
			ac.Input = &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: cc.ArgumentHint}}
		}
		cmds = append(cmds, ac)
	}
	return cmds
}

// send sends cmds as the session's slash commands, and remembers them.
func (ads *commandAds) send(id acpsdk.SessionId, cmds []acpsdk.AvailableCommand) {
	ads.last.Store(id, commandNames(cmds))
	ads.updates.send(id, acpsdk.SessionUpdate{AvailableCommandsUpdate: &acpsdk.SessionAvailableCommandsUpdate{
		SessionUpdate: "available_commands_update", AvailableCommands: cmds,
	}})
}

// commandNames joins the names of cmds.
func commandNames(cmds []acpsdk.AvailableCommand) string {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.Name
	}
	return strings.Join(names, " ")
}

// readvertise sends the session's slash commands again when they
// changed since last sent (an MCP server's prompts, once it is ready or
// after prompts/list_changed). The session's response was written
// already: they go at once.
func (ads *commandAds) readvertise(id acpsdk.SessionId, c *workspace.Conversation) {
	cmds := availableCommands(c)
	if last, _ := ads.last.Load(id); last != commandNames(cmds) {
		ads.send(id, cmds)
	}
}

// reviewProposal asks the client to accept or reject a proposal, then
// tells the session. It runs on a goroutine of its own.
func (o sessionOut) reviewProposal(p workspace.ProposalNote) {
	a, s := o.a, o.s
	ctx := context.Background()
	if err := a.out.flush(ctx); err != nil {
		return
	}
	var content []acpsdk.ToolCallContent
	var locs []acpsdk.ToolCallLocation
	title := "Review the change"
	for i, c := range p.Changes {
		abs := ""
		if i < len(p.Abs) {
			abs = p.Abs[i]
		}
		oldText, newText := p.OldText, p.NewText
		if p.Command != "" && i < len(p.OldTexts) && i < len(p.NewTexts) {
			oldText, newText = p.OldTexts[i], p.NewTexts[i]
		}
		if c.Kind == fsm.ChangeCreate || p.Command != "" && oldText == "" {
			content = append(content, acpsdk.ToolDiffContent(abs, newText))
		} else {
			content = append(content, acpsdk.ToolDiffContent(abs, newText, oldText))
		}
		line := 1
		if len(c.Hunks) > 0 {
			line = c.Hunks[0].StartLine + 1
		}
		locs = append(locs, acpsdk.ToolCallLocation{Path: abs, Line: acpsdk.Ptr(line)})
		title = fmt.Sprintf("Review the change to %s (%d hunk(s))", c.Path, len(c.Hunks))
	}
	kind := acpsdk.ToolKindEdit
	acceptName, rejectName := "Accept", "Reject"
	if p.Command != "" {
		// A command's changes are on disk already: keep or discard.
		var files []string
		for _, c := range p.Changes {
			files = append(files, c.Path)
		}
		title = fmt.Sprintf("`%s` changed %s: keep or discard?", p.Command, strings.Join(files, ", "))
		kind, acceptName, rejectName = acpsdk.ToolKindExecute, "Keep", "Discard"
	}
	resp, err := a.requestPermission(ctx, acpsdk.RequestPermissionRequest{
		SessionId: s.id,
		ToolCall: acpsdk.ToolCallUpdate{
			ToolCallId: acpsdk.ToolCallId(p.CallID),
			Title:      acpsdk.Ptr(title),
			Kind:       acpsdk.Ptr(kind),
			Status:     acpsdk.Ptr(acpsdk.ToolCallStatusPending),
			Content:    content,
			Locations:  locs,
		},
		Options: []acpsdk.PermissionOption{
			{OptionId: optionAccept, Name: acceptName, Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: optionReject, Name: rejectName, Kind: acpsdk.PermissionOptionKindRejectOnce},
		},
	})
	accept := err == nil && resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optionAccept
	if accept {
		_, err = s.ws.Review().Decide(ctx, p.ID, []string{workspace.AllHunks}, nil, "")
	} else {
		why := "rejected in the editor"
		if err != nil {
			why = "the editor could not be asked: " + err.Error()
		}
		_, err = s.ws.Review().Decide(ctx, p.ID, nil, []string{workspace.AllHunks}, why)
	}
	if err != nil {
		a.log.Debug("review", "proposal", p.ID, "err", err)
	}
}

// slashCommand runs a prompt that is one of slashVerbs and returns the
// answer to show; ok is false for any other prompt.
func (o slashRun) slashCommand(ctx context.Context, prompt string) (answer string, ok bool) {
	text := strings.TrimSpace(prompt)
	if !strings.HasPrefix(text, "/") {
		return "", false
	}
	fields := strings.Fields(text[1:])
	if len(fields) == 0 {
		return "", false
	}
	verb, ok := slashVerbs[fields[0]]
	if !ok {
		return "", false
	}
	return verb(o, ctx, fields[1:]), true
}

// slashVerbs run loom's slash commands that slashCommand answers, by
// name, on the words after the name; each returns the answer to show.
// (/trust is answered before, by slashTrust.)
var slashVerbs = map[string]func(o slashRun, ctx context.Context, args []string) string{
	"checkpoints": slashRun.checkpoints,
	"rewind":      slashRun.rewind,
	"redo":        slashRun.redo,
	"keep": func(o slashRun, ctx context.Context, args []string) string {
		return o.keepOrDiscard(ctx, "keep", args)
	},
	"discard": func(o slashRun, ctx context.Context, args []string) string {
		return o.keepOrDiscard(ctx, "discard", args)
	},
}

// checkpoints runs /checkpoints: the turns one can rewind to.
func (o slashRun) checkpoints(ctx context.Context, _ []string) string {
	cps, err := o.s.ws.Changes().Checkpoints(ctx)
	if err != nil {
		return "checkpoints: " + err.Error()
	}
	if len(cps) == 0 {
		return "No checkpoints yet: each of your prompts becomes one."
	}
	var b strings.Builder
	b.WriteString("Checkpoints (rewind with `/rewind N [files|conversation|both]`):\n")
	for _, c := range cps {
		fmt.Fprintf(&b, "- turn %d: %s", c.Turn, firstLine(c.Prompt))
		if len(c.Files) > 0 {
			fmt.Fprintf(&b, " — changed %s", strings.Join(c.Files, ", "))
		}
		if c.Compacted {
			b.WriteString(" (compacted: files only)")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// parseRewind reads /rewind's words: a turn number, then what to restore
// (both by default). problem, when not "", is the answer to show instead.
func parseRewind(args []string) (turn uint64, restore fsm.Restore, problem string) {
	if len(args) == 0 {
		return 0, "", "usage: /rewind N [files|conversation|both]"
	}
	turn, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil || turn == 0 {
		return 0, "", fmt.Sprintf("/rewind: %q is not a turn number (see /checkpoints)", args[0])
	}
	restore = fsm.RestoreBoth
	if len(args) > 1 {
		restore = fsm.Restore(args[1])
		if restore != fsm.RestoreFiles && restore != fsm.RestoreConversation && restore != fsm.RestoreBoth {
			return 0, "", fmt.Sprintf("/rewind: restore is files, conversation or both, not %q", args[1])
		}
	}
	return turn, restore, ""
}

// rewind runs /rewind N [files|conversation|both].
func (o slashRun) rewind(ctx context.Context, args []string) string {
	turn, restore, problem := parseRewind(args)
	if problem != "" {
		return problem
	}
	res, err := o.s.ws.Changes().Rewind(ctx, turn, restore)
	if err != nil {
		return "/rewind: " + err.Error()
	}
	msg := fmt.Sprintf("Rewound (%s) to before turn %d.", restore, turn)
	if len(res.Restored) > 0 {
		msg += " Restored: " + strings.Join(res.Restored, ", ") + "."
	}
	if len(res.Kept) > 0 {
		msg += " Your later edits were kept in " + strings.Join(res.Kept, ", ") + "."
	}
	if left := res.LeftWords(); left != "" {
		msg += " Some files were " + left + "."
	}
	if res.Prompt != "" {
		msg += "\n\nThat turn's prompt was:\n\n" + res.Prompt
	}
	return msg + "\n\n`/redo` undoes this until your next prompt."
}

// redo runs /redo: the last rewind undone.
func (o slashRun) redo(ctx context.Context, _ []string) string {
	res, err := o.s.ws.Changes().Redo(ctx)
	if err != nil {
		return "/redo: " + err.Error()
	}
	msg := "Redone: the last rewind is undone."
	if len(res.Restored) > 0 {
		msg += " Restored: " + strings.Join(res.Restored, ", ") + "."
	}
	return msg
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + "…"
	}
	return s
}

// slashRun runs the slash commands a session's prompt may be
// (/trust, /keep, /discard, …), for the agent a.
type slashRun struct {
	a *agent
	s *session
}

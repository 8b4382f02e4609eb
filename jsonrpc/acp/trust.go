package acp

import (
	"context"
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Trust in ACP: the notice about ignored settings is agent text in the
// conversation, and the user trusts the folder with the slash command
// /trust, advertised with available_commands_update.

// trustCommand is the slash command (without its "/") that trusts the
// session's folder.
const trustCommand = "trust"

// TrustHow is how an ACP user trusts a folder, for the trust notice.
const TrustHow = "type /trust in this conversation"

// trustAvailable is /trust as advertised with the other slash commands.
var trustAvailable = acpsdk.AvailableCommand{
	Name: trustCommand,
	Description: "Trust this folder with its current settings: its .loom.toml (and the editor's settings) may then " +
		"choose the model server and its key, allow commands, start MCP servers and raise what a turn may cost",
}

// announceOnce sends, the first time a session prompts (the client knows
// the session id by then), the trust notice of its folder when settings
// were ignored, and the sandbox line: how commands are confined (what
// LSP clients see in loom.status). /trust is advertised with the other
// slash commands.
func (o sessionOut) announceOnce(ctx context.Context) {
	a, s := o.a, o.s
	if _, seen := a.announced.LoadOrStore(s.id, true); seen {
		return
	}
	st, err := s.ws.Status(ctx)
	if err != nil {
		return
	}
	if st.TrustNotice != "" {
		o.trustNotice(st.TrustNotice)
	}
	if st.Sandbox != "" {
		o.notice("sandbox", "sandbox: "+st.Sandbox)
	}
}

// slashTrust runs the /trust command when text is it: the folder is
// trusted with its current settings, the answer is agent text, and the
// prompt ends without a model turn. handled is false for any other text.
func (o slashRun) slashTrust(ctx context.Context, text string) (resp acpsdk.PromptResponse, handled bool) {
	a, s := o.a, o.s
	if strings.TrimSpace(text) != "/"+trustCommand {
		return acpsdk.PromptResponse{}, false
	}
	a.announced.Store(s.id, true)
	msg := ""
	if folder, err := a.host.TrustFolder(s.folder); err != nil {
		msg = "Could not trust the folder: " + err.Error()
	} else {
		msg = fmt.Sprintf("Trusted %s with its current settings: its .loom.toml and the editor's settings are honoured. "+
			"If they change (a command, a git pull), they are ignored again until you type /trust.", folder)
		if st, err := s.ws.Status(ctx); err == nil && st.TrustNotice != "" {
			msg += "\n\n" + st.TrustNotice
		}
	}
	a.updates.send(s.id, acpsdk.UpdateAgentMessageText(msg))
	sent := make(chan struct{})
	a.updates.markFor(s.id, func() { close(sent) })
	select {
	case <-sent:
	case <-ctx.Done():
	}
	return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, true
}

// trustNotice tells session s about its folder's held-back settings,
// unless it was told this very notice last: the folder's notice and the
// first prompt's announcement carry the same text, which the user reads
// once.
func (o sessionOut) trustNotice(text string) {
	a, s := o.a, o.s
	a.mu.Lock()
	said := s.trustSaid == text
	s.trustSaid = text
	a.mu.Unlock()
	if !said {
		a.updates.send(s.id, acpsdk.UpdateAgentMessageText("⚠ "+text+"\n\n"))
	}
}

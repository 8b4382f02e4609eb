package jsonrpc

import (
	"context"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// MethodHook is the server's loom/hook notification: what an agent hook
// said (ran, decided, failed, or was held back). Our plugins show Text as
// a line of the conversation; Hook carries the details.
const MethodHook = "loom/hook"

// HookParams is loom/hook's params.
type HookParams struct {
	Folder       string `json:"folder"`
	Conversation string `json:"conversation,omitempty"`
	Turn         uint64 `json:"turn"`
	// Text is the report in one line: "hook .claude/settings.json:9
	// PreToolUse: ./guard.sh: deny: rm -rf is not allowed here".
	Text string              `json:"text"`
	Hook *workspace.HookNote `json:"hook"`
}

// HookReported sends what a hook said: loom/hook to our plugins (and the log
// line); a generic client sees a hook that blocked, failed or was held
// back as a message, the others in its log.
func (f *folderOut) HookReported(n workspace.HookReported) {
	caps := f.caps()
	line := f.label() + ": " + n.Hook.Line()
	if caps.loom {
		f.s.notify(context.Background(), MethodHook, &HookParams{Folder: f.folder, Conversation: f.conversation, Turn: n.Turn, Text: n.Hook.Line(), Hook: n.Hook})
		f.s.logMessage(protocol.MessageTypeInfo, line)
		return
	}
	h := n.Hook
	if h.Decision == "deny" || h.Decision == "block" || h.Decision == "ask" || h.Problem != "" || h.Held != "" || h.StopTurn {
		f.show(protocol.MessageTypeWarning, line)
		return
	}
	f.s.logMessage(protocol.MessageTypeInfo, line)
}

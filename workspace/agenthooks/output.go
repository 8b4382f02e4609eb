package agenthooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Decision is what a hook decided.
type Decision string

// The decisions. Allow, Deny and Ask answer PreToolUse; Block refuses a
// prompt (UserPromptSubmit), gives the model feedback on a tool's result
// (PostToolUse) or keeps the turn going (Stop).
const (
	None  Decision = ""
	Allow Decision = "allow"
	Deny  Decision = "deny"
	Ask   Decision = "ask"
	Block Decision = "block"
)

// Outcome is what a hook said, read per its format.
type Outcome struct {
	Decision Decision
	// Reason goes with the decision: the model reads it for Deny and
	// Block (the user, for a refused prompt and Ask).
	Reason string
	// Context is more for the model (additionalContext; the plain stdout
	// of UserPromptSubmit and SessionStart hooks).
	Context string
	// StopTurn: the hook asked to end the turn ("continue": false);
	// StopReason says why, to the user.
	StopTurn   bool
	StopReason string
	// Message is shown to the user (systemMessage; the stderr of a
	// failing hook).
	Message string
	// Problem says why the hook decided nothing: it could not run,
	// timed out, crashed, or said something unreadable.
	Problem string
	// Input is the tool input a PreToolUse hook rewrote the call to
	// (Claude Code's, Codex's and VS Code's
	// hookSpecificOutput.updatedInput, the Copilot CLI's modifiedArgs):
	// a JSON object, whole, in the format's shape (LoomInput maps it back
	// onto loom's); nil when it rewrote nothing, or denied.
	Input json.RawMessage
	// Quiet: the hook asked that what it said not be shown
	// (suppressOutput); a decision is shown all the same.
	Quiet bool
}

// maxReason bounds a reason or context taken into the conversation.
const maxReason = 8 << 10

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxReason {
		s = strings.ToValidUTF8(s[:maxReason], "") + " […]"
	}
	return s
}

// hookOutput is the JSON a hook may print, in all formats: Claude Code's
// (Codex's and VS Code's are the same) and the Copilot CLI's flat
// permissionDecision.
type hookOutput struct {
	Continue           *bool           `json:"continue"`
	SuppressOutput     bool            `json:"suppressOutput"`
	StopReason         string          `json:"stopReason"`
	SystemMessage      string          `json:"systemMessage"`
	Decision           string          `json:"decision"`
	Reason             string          `json:"reason"`
	PermissionDecision string          `json:"permissionDecision"`
	PermissionReason   string          `json:"permissionDecisionReason"`
	AdditionalContext  string          `json:"additionalContext"`
	ModifiedArgs       json.RawMessage `json:"modifiedArgs"`
	HookSpecificOutput *struct {
		PermissionDecision string          `json:"permissionDecision"`
		PermissionReason   string          `json:"permissionDecisionReason"`
		AdditionalContext  string          `json:"additionalContext"`
		UpdatedInput       json.RawMessage `json:"updatedInput"`
		Decision           *struct {
			Behavior string `json:"behavior"`
			Message  string `json:"message"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
}

// Parse reads a finished hook's exit code and output as the formats
// define them:
//
//   - exit 0: stdout may be JSON (decision, reason, continue, stopReason,
//     systemMessage, hookSpecificOutput.permissionDecision,
//     permissionDecisionReason, additionalContext); other stdout is
//     context for UserPromptSubmit and SessionStart, ignored otherwise;
//   - exit 2: blocks, with stderr as the reason: the tool call is denied
//     (PreToolUse), the model reads it (PostToolUse, Stop: the turn goes
//     on), the prompt is refused (UserPromptSubmit); for the other events
//     it is shown to the user;
//   - any other exit code: a failure shown to the user; nothing decided.
func Parse(h *Hook, ev Event, code int, stdout, stderr string) Outcome {
	switch code {
	case 0:
		return parseStdout(h, ev, stdout)
	case 2:
		reason := clip(stderr)
		if reason == "" {
			reason = "(the hook gave no reason)"
		}
		switch ev {
		case PreToolUse:
			return Outcome{Decision: Deny, Reason: reason}
		case PostToolUse, UserPromptSubmit, Stop:
			return Outcome{Decision: Block, Reason: reason}
		}
		return Outcome{Message: reason}
	}
	msg := clip(stderr)
	if msg == "" {
		msg = clip(stdout)
	}
	return Outcome{Problem: fmt.Sprintf("exit code %d", code), Message: msg}
}

// parseStdout reads the output of a hook that exited 0: plain text is
// context (for the events that take it), JSON says what the hook decided.
func parseStdout(h *Hook, ev Event, stdout string) Outcome {
	text := strings.TrimSpace(stdout)
	if !strings.HasPrefix(text, "{") {
		if text != "" && (ev == UserPromptSubmit || ev == SessionStart) {
			return Outcome{Context: clip(text)}
		}
		return Outcome{}
	}
	var o hookOutput
	if err := json.Unmarshal([]byte(text), &o); err != nil {
		return Outcome{Problem: "its output is not valid JSON: " + err.Error()}
	}
	if o.SuppressOutput && h != nil && h.Format == FormatCodex && (ev == PreToolUse || ev == PostToolUse) {
		return Outcome{Problem: fmt.Sprintf("%s hooks cannot suppressOutput (Codex refuses it so)", ev)}
	}
	out := Outcome{Message: clip(o.SystemMessage), Context: clip(o.context()), Quiet: o.SuppressOutput}
	if o.Continue != nil && !*o.Continue {
		out.StopTurn, out.StopReason = true, clip(o.StopReason)
	}
	switch ev {
	case PreToolUse:
		return o.preToolUse(h, out)
	case PostToolUse, UserPromptSubmit, Stop:
		if o.Decision == "block" {
			out.Decision, out.Reason = Block, clip(o.Reason)
			if out.Reason == "" {
				out.Reason = "(the hook gave no reason)"
			}
		}
	}
	return out
}

// context is what the hook adds for the model: hookSpecificOutput's
// additionalContext over the flat one.
func (o *hookOutput) context() string {
	if s := o.HookSpecificOutput; s != nil && s.AdditionalContext != "" {
		return s.AdditionalContext
	}
	return o.AdditionalContext
}

// permission is a PreToolUse hook's permission decision with its reason,
// and its rewritten input: hookSpecificOutput's (Claude Code's, Codex's)
// over the flat fields (the Copilot CLI's).
func (o *hookOutput) permission() (perm, reason string, input json.RawMessage) {
	perm, reason, input = o.PermissionDecision, o.PermissionReason, o.ModifiedArgs
	if s := o.HookSpecificOutput; s != nil {
		if s.PermissionDecision != "" {
			perm, reason = s.PermissionDecision, s.PermissionReason
		}
		if len(s.UpdatedInput) > 0 {
			input = s.UpdatedInput
		}
	}
	return perm, reason, input
}

// preToolUse adds to out what a PreToolUse hook decided of the call: a
// permission decision (or the older decision "block" / "approve") and a
// rewritten input.
func (o *hookOutput) preToolUse(h *Hook, out Outcome) Outcome {
	perm, permReason, input := o.permission()
	switch {
	case perm != "":
		out.Decision, out.Reason = Decision(perm), clip(permReason)
	case o.Decision == "block":
		out.Decision, out.Reason = Deny, clip(o.Reason)
	case o.Decision == "approve":
		out.Decision, out.Reason = Allow, clip(o.Reason)
	}
	if out.Decision != None && out.Decision != Allow && out.Decision != Deny && out.Decision != Ask {
		return Outcome{Problem: fmt.Sprintf("permissionDecision %q is none of allow, deny, ask", perm)}
	}
	if problem := out.rewrite(h, input); problem != "" {
		return Outcome{Problem: problem}
	}
	return out
}

// rewrite takes a PreToolUse hook's rewritten input: a JSON object, used
// whole unless the call is denied. Codex takes it only with
// permissionDecision "allow" and refuses it otherwise, so a Codex hook
// gets the same answer here; the other formats take it with allow, ask
// or no decision (the input then goes through loom's approval as the
// model's would: a hook's allow widens nothing).
func (out *Outcome) rewrite(h *Hook, input json.RawMessage) (problem string) {
	text := bytes.TrimSpace(input)
	if len(text) == 0 || bytes.Equal(text, []byte("null")) {
		return ""
	}
	if text[0] != '{' {
		return "its updatedInput is not a JSON object"
	}
	if h != nil && h.Format == FormatCodex && out.Decision != Allow {
		return `its updatedInput goes without permissionDecision "allow" (Codex refuses it so)`
	}
	if out.Decision == Deny {
		return ""
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, text); err != nil {
		return "its updatedInput is not valid JSON: " + err.Error()
	}
	out.Input = compact.Bytes()
	return ""
}

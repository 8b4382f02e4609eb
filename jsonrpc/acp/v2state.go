package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	acpsdk "github.com/coder/acp-go-sdk"
)

// What v2 says that v1 has no word for (see protocol.go): the prompt
// accepted at once, its user_message echo, and state_update. Names from
// @agentclientprotocol/sdk 2.4.0 schema/v2/schema.json.

// stateUpdate is a v2 state_update (StateUpdate): running while the
// session's machine works on a turn, requires_action while a permission
// request waits for the user, idle with the turn's stopReason when it
// ends ("error" with the JSON-RPC error v1's session/prompt answers).
type stateUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	State         string `json:"state"`
	// StopReason is idle's: a reason, or null when no turn ended (the
	// schema's IdleStateUpdate "none"; the SDK wants it said).
	StopReason json.RawMessage `json:"stopReason,omitempty"`
	Error      *stateError     `json:"error,omitempty"`
}

// stateError is an idle state's error (schema/v2 Error).
type stateError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func stateRunning() stateUpdate {
	return stateUpdate{SessionUpdate: "state_update", State: "running"}
}

func stateRequiresAction() stateUpdate {
	return stateUpdate{SessionUpdate: "state_update", State: "requires_action"}
}

// stateIdle is idle after a turn that answered resp or failed with err;
// with neither (a resumed session), idle without a stopReason.
func stateIdle(resp *acpsdk.PromptResponse, err error) stateUpdate {
	u := stateUpdate{SessionUpdate: "state_update", State: "idle", StopReason: json.RawMessage("null")}
	var re *acpsdk.RequestError
	switch {
	case errors.As(err, &re):
		u.StopReason, u.Error = json.RawMessage(`"error"`), &stateError{Code: re.Code, Message: re.Message, Data: re.Data}
	case err != nil:
		u.StopReason, u.Error = json.RawMessage(`"error"`), &stateError{Code: -32603, Message: err.Error()}
	case resp != nil:
		u.StopReason, _ = json.Marshal(resp.StopReason)
	}
	return u
}

// userMessage is v2's user_message update (UserMessage): the prompt as
// inserted, under the messageId session/prompt answered.
type userMessage struct {
	SessionUpdate string                `json:"sessionUpdate"`
	MessageID     string                `json:"messageId"`
	Content       []acpsdk.ContentBlock `json:"content"`
}

// promptAccepted is v2's session/prompt result (PromptResponse).
type promptAccepted struct {
	MessageID string `json:"messageId"`
}

// promptV2 serves v2's session/prompt: the same turn as v1's Prompt
// (startPrompt), answered as soon as the prompt is inserted — its
// messageId, after its user_message echo — while the turn reports
// through state_update: running when the machine starts it (turnStarted),
// idle with v1's stopReason (or its error) once its updates went out.
func (a *agent) promptV2(ctx context.Context, raw json.RawMessage) (any, error) {
	var p acpsdk.PromptRequest
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalidParams("session/prompt: %v", err)
	}
	if len(p.Prompt) == 0 {
		return nil, invalidParams("session/prompt: the prompt is empty")
	}
	s, err := a.liveSession(p.SessionId)
	if err != nil {
		return nil, err
	}
	// The turn's first updates wait behind the echo of its prompt.
	release := a.updates.holdForReplay(s.id)
	run, err := a.startPrompt(ctx, p)
	if err != nil {
		release()
		return nil, err
	}
	id := run.userID
	if run.answered != nil { // a slash command: no turn, no turn id
		id = a.nextUserMessageID(s, p.MessageId)
	}
	a.mu.Lock()
	a.updates.firstLocked(s.id, heldItem{raw: userMessage{SessionUpdate: "user_message", MessageID: id, Content: p.Prompt}})
	a.mu.Unlock()
	release()
	a.bg.Add(1)
	go func() {
		defer a.bg.Done()
		resp, err := a.finishPrompt(run)
		a.updates.sendRaw(s.id, stateIdle(&resp, err))
	}()
	return promptAccepted{MessageID: id}, nil
}

// nextUserMessageID is the id of a v2 prompt: the client's when it gave
// one, else one of loom's own, unique in the session.
func (a *agent) nextUserMessageID(s *session, given *string) string {
	if given != nil && *given != "" {
		return *given
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s.prompts++
	return fmt.Sprintf("%s-prompt-%d", s.id, s.prompts)
}

// gitPatch is the change of path from old to new as a git patch (v2's
// DiffPatch, format git_patch).
func gitPatch(path, old, new string, added bool) string {
	rel := strings.TrimPrefix(path, "/")
	from := "a/" + rel
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n", rel, rel)
	if added {
		b.WriteString("new file mode 100644\n")
		from = "/dev/null"
	}
	b.WriteString(udiff.Unified(from, "b/"+rel, old, new))
	return b.String()
}

package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// Rewind over ACP, as the Session Rewind draft specifies it (RFD
// "Session Rewind", agent-client-protocol PR #1214, open for a champion),
// behind its unstable capability agentCapabilities.rewindSession
// {supported, supportsEditPrompt} (wire.go adds it):
//
//   - session/rewind {sessionId, toMessageId} keeps the conversation up
//     to and including the agent message toMessageId and drops what
//     follows: loom rewinds to before the next turn, the conversation
//     and the files (workspace/changes Rewind: the agent's later changes
//     taken back, the user's own edits kept). It answers
//     {remainingMessageCount, lastMessageId}. loom rewinds whole turns,
//     so a user message is refused: session/edit_prompt edits it.
//   - session/edit_prompt {sessionId, messageId, newContent} rewinds to
//     before the user message messageId (conversation and files) and
//     runs newContent in its place; it answers like session/prompt.
//
// A turn in flight is cancelled first. Message ids: the agent's text of
// turn N is "<session>-N-<k>" (editor.go); a prompt keeps the messageId
// its session/prompt gave, else gets "<session>-user-N", echoed as
// userMessageId. Ids the client gave are known until the process ends;
// loom's own survive a restart.

// The draft's methods, and the extension methods deleteReader hands
// them to the SDK as.
const (
	methodSessionRewind = "session/rewind"
	extSessionRewind    = "_loom/session/rewind"
	methodEditPrompt    = "session/edit_prompt"
	extEditPrompt       = "_loom/session/edit_prompt"
)

// rewindRequest is session/rewind's params.
type rewindRequest struct {
	SessionID   acpsdk.SessionId `json:"sessionId"`
	ToMessageID string           `json:"toMessageId"`
}

// rewindResponse is session/rewind's result.
type rewindResponse struct {
	RemainingMessageCount int     `json:"remainingMessageCount"`
	LastMessageID         *string `json:"lastMessageId,omitempty"`
}

// editPromptRequest is session/edit_prompt's params.
type editPromptRequest struct {
	SessionID  acpsdk.SessionId      `json:"sessionId"`
	MessageID  string                `json:"messageId"`
	NewContent []acpsdk.ContentBlock `json:"newContent"`
}

// userMessageID names the prompt of turn; given is the client's id.
func (r rewinds) userMessageID(s *session, turn uint64, given *string) string {
	a := r.a
	id := fmt.Sprintf("%s-user-%d", s.id, turn)
	if given != nil && *given != "" {
		id = *given
	}
	a.mu.Lock()
	if s.userIDs == nil {
		s.userIDs = map[string]uint64{}
	}
	s.userIDs[id] = turn
	a.mu.Unlock()
	return id
}

// turnOfMessage finds the turn of message id of session s, and whether
// it is the user's prompt.
func (r rewinds) turnOfMessage(s *session, id string) (turn uint64, user bool, ok bool) {
	a := r.a
	a.mu.Lock()
	t, known := s.userIDs[id]
	a.mu.Unlock()
	if known {
		return t, true, true
	}
	rest, found := strings.CutPrefix(id, string(s.id)+"-")
	if !found {
		return 0, false, false
	}
	if n, ok := strings.CutPrefix(rest, "user-"); ok {
		t, err := strconv.ParseUint(n, 10, 64)
		return t, true, err == nil && t > 0
	}
	n, _, _ := strings.Cut(rest, "-")
	t, err := strconv.ParseUint(n, 10, 64)
	return t, false, err == nil && t > 0
}

// settle cancels session s's turn in flight, if any, and waits for it
// to end.
func (r rewinds) settle(ctx context.Context, s *session) error {
	a := r.a
	st, err := s.ws.Status(ctx)
	if err != nil || st.State == fsm.WaitingForUserInput.String() {
		return err
	}
	w := a.waitFor(turnKey{s.id, st.Turn})
	if err := s.ws.Cancel(ctx); err != nil {
		return err
	}
	if st, err := s.ws.Status(ctx); err != nil || st.State == fsm.WaitingForUserInput.String() {
		return err
	}
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// rewindSession implements session/rewind.
func (r rewinds) rewindSession(ctx context.Context, p rewindRequest) (rewindResponse, error) {
	a := r.a
	s, err := a.liveSession(p.SessionID)
	if err != nil {
		return rewindResponse{}, err
	}
	turn, user, ok := r.turnOfMessage(s, p.ToMessageID)
	if !ok {
		return rewindResponse{}, invalidParams("unknown message %q in session %s", p.ToMessageID, s.id)
	}
	if user {
		return rewindResponse{}, invalidParams("message %q is a prompt: loom rewinds whole turns — rewind to the agent message before it, or edit it with session/edit_prompt", p.ToMessageID)
	}
	if err := r.settle(ctx, s); err != nil {
		return rewindResponse{}, err
	}
	// The turn after it (turn ids never go back: after an earlier
	// rewind the next checkpoint may be further on).
	cps, err := s.ws.Changes().Checkpoints(ctx)
	if err != nil {
		return rewindResponse{}, err
	}
	next := uint64(0)
	for _, c := range cps {
		if c.Turn > turn && (next == 0 || c.Turn < next) {
			next = c.Turn
		}
	}
	if next > 0 {
		if _, err := s.ws.Changes().Rewind(ctx, next, fsm.RestoreBoth); err != nil {
			return rewindResponse{}, invalidParams("%v", err)
		}
	}
	msgs, err := s.ws.History(ctx)
	if err != nil {
		return rewindResponse{}, err
	}
	n := 0
	for _, m := range msgs {
		if m.Role == fsm.RoleUser || m.Role == fsm.RoleAssistant {
			n++
		}
	}
	last := p.ToMessageID
	a.log.Info("session/rewind", "session", s.id, "to", p.ToMessageID, "turn", turn)
	return rewindResponse{RemainingMessageCount: n, LastMessageID: &last}, nil
}

// editPrompt implements session/edit_prompt.
func (r rewinds) editPrompt(ctx context.Context, p editPromptRequest) (acpsdk.PromptResponse, error) {
	a := r.a
	s, err := a.liveSession(p.SessionID)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	turn, user, ok := r.turnOfMessage(s, p.MessageID)
	if !ok || !user {
		return acpsdk.PromptResponse{}, invalidParams("message %q is not a prompt of session %s", p.MessageID, s.id)
	}
	if len(p.NewContent) == 0 {
		return acpsdk.PromptResponse{}, invalidParams("newContent is empty")
	}
	if err := r.settle(ctx, s); err != nil {
		return acpsdk.PromptResponse{}, err
	}
	if _, err := s.ws.Changes().Rewind(ctx, turn, fsm.RestoreBoth); err != nil {
		return acpsdk.PromptResponse{}, invalidParams("%v", err)
	}
	a.log.Info("session/edit_prompt", "session", s.id, "message", p.MessageID, "turn", turn)
	id := p.MessageID
	return a.Prompt(ctx, acpsdk.PromptRequest{SessionId: s.id, Prompt: p.NewContent, MessageId: &id})
}

// handleRewind decodes and runs the draft's methods; handled is false
// for any other method.
func (rw rewinds) handleRewind(ctx context.Context, method string, params json.RawMessage) (result any, handled bool, err error) {
	switch method {
	case extSessionRewind:
		var p rewindRequest
		if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" || p.ToMessageID == "" {
			return nil, true, invalidParams("session/rewind needs {sessionId, toMessageId}")
		}
		r, err := rw.rewindSession(ctx, p)
		return r, true, err
	case extEditPrompt:
		var p editPromptRequest
		if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" || p.MessageID == "" {
			return nil, true, invalidParams("session/edit_prompt needs {sessionId, messageId, newContent}")
		}
		r, err := rw.editPrompt(ctx, p)
		return r, true, err
	}
	return nil, false, nil
}

// rewinds are loom's ACP extension methods that rewind a session or edit
// an earlier prompt (handleRewind), for the agent a.
type rewinds struct{ a *agent }

package acp

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	acpsdk "github.com/coder/acp-go-sdk"
)

// The protocol version of a connection. ACP v2 (Preview, schema
// @agentclientprotocol/sdk 2.4.0 schema/v2/schema.json) is served beside
// v1 from the same process, chosen per connection by the protocolVersion
// the client asks in initialize: 2 or more gives 2, anything else 1.
//
// One value knows the version: the connection's protocol. Behaviour is
// one path for both (the handlers, the sessions, the updates, made as
// v1 values of the SDK); what v2 changes is a mapping at the wire, in
// three places and nowhere else:
//
//   - in: the client's v2 messages become what the handlers take
//     (v2in.go: initialize's info/capabilities, session/resume with
//     replayFrom, session/prompt as the v2 prompt handler);
//   - out: what the handlers wrote becomes v2 (v2out.go: the initialize
//     response, configOptions, each session update mapped once, the
//     permission request's title and subject);
//   - lifecycle: what v2 adds that v1 has no word for — state_update
//     (running, idle with its stopReason, requires_action) and the
//     prompt's user_message echo — through the agent's lifecycle hooks
//     below, which say nothing on a v1 connection (v2state.go).
//
// A v1 client sees exactly what it saw before: every mapping is the
// identity for it.
type protocol struct {
	v2 atomic.Bool // set once, when the initialize request asks 2 or more

	// Of the v2 mapping out (v2out.go), touched only by the writer's
	// goroutine under mu: the synthetic message id of the chunks that
	// came without one, per session.
	mu     sync.Mutex
	chunks map[string]chunkRun
}

// protocolVersion2 is ACP v2's protocolVersion.
const protocolVersion2 = 2

// in maps one line the client sent to what the handlers take.
func (p *protocol) in(line []byte) []byte {
	return rewriteRequest(line, func(m map[string]json.RawMessage, method string) bool {
		if method == "initialize" && !p.v2.Load() {
			var params struct {
				ProtocolVersion int `json:"protocolVersion"`
			}
			if json.Unmarshal(m["params"], &params) != nil || params.ProtocolVersion < protocolVersion2 {
				return false
			}
			p.v2.Store(true)
		}
		return p.v2.Load() && v2In(m, method)
	})
}

// out maps one message the handlers wrote to the connection's version;
// nil drops it (a v1 update v2 has no place for).
func (p *protocol) out(b []byte) []byte {
	if !p.v2.Load() {
		return b
	}
	return p.v2Out(b)
}

// protoWriter writes what the SDK wrote through the connection's
// protocol (one whole message per Write).
type protoWriter struct {
	p   *protocol
	out interface{ Write([]byte) (int, error) }
}

func (w protoWriter) Write(b []byte) (int, error) {
	nb := w.p.out(b)
	if nb == nil {
		return len(b), nil
	}
	if _, err := w.out.Write(nb); err != nil {
		return 0, err
	}
	return len(b), nil
}

// The agent's lifecycle hooks: what v2 says that v1 has no word for.
// Each says nothing on a v1 connection.

// turnStarted: the session's machine left WaitingForUserInput for a turn
// (workspace.TurnStarted, in order with the turn's updates).
func (a *agent) turnStarted(id acpsdk.SessionId) {
	if a.proto.v2.Load() {
		a.updates.sendRaw(id, stateRunning())
	}
}

// requestPermission asks the client (session/request_permission): on v2
// the session requires the user's action until it is answered.
func (a *agent) requestPermission(ctx context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	if !a.proto.v2.Load() {
		return a.client().RequestPermission(ctx, req)
	}
	a.updates.sendRaw(req.SessionId, stateRequiresAction())
	if err := a.out.flush(ctx); err != nil {
		return acpsdk.RequestPermissionResponse{}, err
	}
	resp, err := a.client().RequestPermission(ctx, req)
	if err == nil && ctx.Err() == nil { // else the turn is ending: idle follows
		a.updates.sendRaw(req.SessionId, stateRunning())
	}
	return resp, err
}

// restored: session/load or session/resume restored s; on v2 its
// current state goes out before the response (the schema's
// ResumeSessionResponse: after any replay, before the response).
func (a *agent) restored(ctx context.Context, s *session) error {
	if !a.proto.v2.Load() {
		return nil
	}
	st, err := s.ws.Status(ctx)
	if err != nil {
		return err
	}
	if st.State == "WaitingForUserInput" {
		a.updates.sendRaw(s.id, stateIdle(nil, nil))
	} else {
		a.updates.sendRaw(s.id, stateRunning())
	}
	return a.out.flush(ctx)
}

package workspace

import (
	"context"
	"errors"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/secret"
)

// out is a conversation's way out to the user: every notification and
// approval it sends to the editor goes through it, masked (redact.go says
// how: a Stream per streamed kind), with the conversation's folder and id,
// and named as the child's when the conversation is a subagent. It also
// shows the machine's state when that changed (state).
//
// notify, state and flush run on the conversation's owner goroutine;
// approve on any goroutine.
type out struct {
	// ed is the editor, r the host's redactor, dir the folder.
	ed  Editor
	r   *secret.Redactor
	dir string
	// id is the conversation's id on its own goroutine, sharedID on any.
	id, sharedID func() string
	// children names a child and shows its waits on the parent's call;
	// hooks run the Notification hooks of an approval.
	children *children
	hooks    *convHooks
	// shown masks the streamed texts across their deltas.
	shown shownTexts
	// lastState is the state last shown, stateShown whether one was
	// (false: the next state is shown whatever it is).
	lastState  fsm.StateKind
	stateShown bool
}

// notify sends n to the editor, masked. Streamed text goes through its
// kind's Stream; a notification that ends the streamed message first
// flushes what the Streams held back.
func (o *out) notify(n Notification) {
	n.Folder, n.Conversation = o.dir, o.id()
	if l := o.children.up; l != nil && n.Subagent == nil {
		n.Subagent = l.naming()
	}
	for _, st := range o.shown {
		if st.kind != n.Kind {
			continue
		}
		if n.Turn != st.turn {
			st.flush(o.ed, o.dir, n.Conversation)
			st.turn = n.Turn
		}
		if n.Text = st.mask.Write(n.Text); n.Text != "" {
			o.ed.Notify(n)
		}
		return
	}
	if endsMessage(n) {
		o.shown.flush(o.ed, o.dir, n.Conversation)
	}
	o.ed.Notify(redactNote(o.r, n))
}

// flush sends what the streamed kinds held back (the conversation
// ends).
func (o *out) flush() {
	o.shown.flush(o.ed, o.dir, o.id())
}

// state shows the state of m (under st) when it is not the one shown
// last: with the context's use when waiting or running tools, and the
// usage when waiting.
func (o *out) state(m *fsm.Machine, st *settings) {
	k := m.State().Kind
	if k == o.lastState && o.stateShown {
		return
	}
	o.lastState, o.stateShown = k, true
	n := Notification{Kind: NoteState, Turn: m.State().Turn, State: k.String()}
	if k == fsm.WaitingForUserInput || k == fsm.ExecutingTools {
		n.Context = contextUse(m, st)
	}
	if k == fsm.WaitingForUserInput {
		var total fsm.Usage
		n.Usage, total = m.Usage()
		n.TotalUsage = &total
	}
	o.notify(n)
}

// errApprovalTimeout is approve's error when the user did not answer in
// time.
var errApprovalTimeout = errors.New("no answer in time")

// approve asks the editor to allow an action, its detail masked, waiting
// at most timeout (none when 0) for the answer.
func (o *out) approve(ctx context.Context, a Approval, timeout time.Duration) (bool, error) {
	a.Detail = o.r.String(a.Detail)
	a.Conversation = o.sharedID()
	if l := o.children.up; l != nil {
		// A child asks through its root's client, named as the child's;
		// its parent's agent call shows that it waits.
		a.Subagent, a.Conversation = l.naming(), l.rootID()
		o.children.progress("waiting", "waits for your approval: "+a.Tool+" "+a.Detail)
	}
	o.hooks.notify(a.Turn, "use "+a.Tool)
	if timeout <= 0 {
		return o.ed.Approve(ctx, a)
	}
	asking, cancel := context.WithTimeoutCause(ctx, timeout, errApprovalTimeout)
	defer cancel()
	ok, err := o.ed.Approve(asking, a)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(asking), errApprovalTimeout) {
		return false, errApprovalTimeout
	}
	return ok, err
}

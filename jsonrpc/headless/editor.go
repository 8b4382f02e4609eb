// Package headless is the front end of `loom-lsp exec` and the demo: a
// workspace.Editor that writes a session's progress as text or JSON lines.
package headless

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// Format is the output of an Editor.
type Format string

// The headless output formats.
const (
	// Text prints the assistant's text as it streams, each message on
	// lines of its own; tool calls, commits, retries and errors go to the
	// log writer as short lines.
	Text Format = "text"
	// JSONL prints one JSON event per line (see Event).
	JSONL Format = "jsonl"
)

// Options configure an Editor.
type Options struct {
	Format Format
	// Out is the chosen output (stdout); Log is text mode's side channel
	// for tool lines, commits, errors and the progress line (stderr).
	Out, Log io.Writer
	// NoDeltas leaves message_delta events out of JSONL: scripts that only
	// want results read message_completed.
	NoDeltas bool
	// Color uses ANSI colours in text mode's side channel.
	Color bool
	// Progress shows, in text mode, a line on Log saying what the turn
	// waits for (the model, a command, a retry) whenever nothing else was
	// printed for a moment. For a terminal.
	Progress bool
	// ShowOutput prints each command's output under its tool line in text
	// mode.
	ShowOutput bool
	// ShowReasoning prints the model's reasoning in text mode, dimmed, on
	// Log (never on Out, which holds the answer alone).
	ShowReasoning bool
	// OnProposal, when set, is called on a goroutine of its own with each
	// proposal (tools.edits = "review"), after it was shown: exec
	// --edits propose answers it. Without it a proposal waits.
	OnProposal func(p workspace.ProposalNote)
	// OnPlan, when set, is called on a goroutine of its own with each
	// plan proposed for approval (plan mode), after it was shown: exec
	// --plan answers it. Without it a plan waits.
	OnPlan func(plan string)
	// Elicit is how an MCP server's question is answered: ElicitDecline
	// ("" too) or ElicitDefaults (elicit.go).
	Elicit string
}

// progressEvery is how often tool_progress events and text mode's
// progress line are refreshed.
const progressEvery = time.Second

// Editor is the workspace.Editor of `loom-lsp exec` and the demo: it
// writes the session's notifications to its output, can apply no edit
// itself (edits go to disk), and has no one to ask (bash under "ask" is
// refused, and the user is told how to allow it).
type Editor struct {
	opts Options

	mu          sync.Mutex
	cond        *sync.Cond
	begun       bool                              // Begin was called
	early       []workspace.Notification          // info and errors before the first turn
	sessionID   string                            // set by Begin
	folder      string                            // set by Begin
	ended       map[uint64]workspace.Notification // turn -> its turn_ended
	lastError   map[uint64]workspace.Notification // turn -> its last error
	message     strings.Builder                   // the assistant message being streamed
	messages    int                               // messages so far in the turn
	running     map[string]*runningTool           // by call id
	commands    map[string]string                 // bash calls' commands, by call id
	turn        uint64                            // the turn last heard of
	state       string                            // the machine's state name
	stateAt     time.Time                         // when it entered it
	retryAt     time.Time                         // when a scheduled retry fires
	lastWrite   time.Time                         // last output, of any kind
	told        bool                              // the bash refusal was explained
	toldServers map[string]bool                   // the MCP servers whose refusal was explained
	text        textState
	writeErr    error         // the first failed write to out or log
	broken      chan struct{} // closed on the first failed write
	stop        chan struct{} // closed by Close
	stopped     chan struct{} // closed when the ticker has returned
}

// runningTool is a tool call between its start and its end.
type runningTool struct {
	name    string
	detail  string // what it runs (bash's command)
	latest  string // its latest progress message (bash: its latest output line)
	started time.Time
	// reported is when tool_progress last reported it (at first, when it
	// started).
	reported time.Time
}

// NewEditor returns an editor writing format to out; in text mode the
// lines about tools, commits and errors go to log.
func NewEditor(format Format, out, log io.Writer) *Editor {
	return New(Options{Format: format, Out: out, Log: log})
}

// New returns an editor with opts. Close stops it.
func New(opts Options) *Editor {
	h := &Editor{opts: opts, broken: make(chan struct{}), stop: make(chan struct{}), stopped: make(chan struct{}),
		ended: map[uint64]workspace.Notification{}, lastError: map[uint64]workspace.Notification{},
		running: map[string]*runningTool{}, commands: map[string]string{}, text: textState{atLineEnd: true}, lastWrite: time.Now()}
	h.cond = sync.NewCond(&h.mu)
	if opts.Format == JSONL || opts.Progress {
		go h.tick()
	} else {
		close(h.stopped)
	}
	return h
}

// Close stops the editor's progress ticker and clears the progress line.
func (h *Editor) Close() {
	h.mu.Lock()
	select {
	case <-h.stop:
	default:
		close(h.stop)
	}
	h.clearProgress()
	h.mu.Unlock()
	<-h.stopped
}

// Begin starts the output proper, once the session of folder is ready:
// what came before (a resumed conversation closing its interrupted turn)
// is forgotten, so that WaitTurn only sees turns that end from now on, and
// info or errors about the earlier conversation are shown after the next
// turn_started. In JSONL it writes session_started.
func (h *Editor) Begin(st workspace.Status, resumed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.begun, h.sessionID, h.folder = true, st.ConversationID, st.Folder
	clear(h.ended)
	clear(h.lastError)
	if h.opts.Format == JSONL {
		h.writeEvent(Event{Type: "session_started", SessionID: st.ConversationID, Folder: st.Folder, Resumed: &resumed, Turn: st.Turn, Sandbox: st.Sandbox})
	}
}

// Notify implements workspace.Editor.
func (h *Editor) Notify(n workspace.Notification) {
	h.mu.Lock()
	defer h.mu.Unlock()
	side := n.Kind == workspace.NoteInfo || n.Kind == workspace.NoteError
	if !h.begun {
		// Resuming: the earlier conversation's leftovers. Keep what the
		// user should read for after the next turn_started.
		if side {
			h.early = append(h.early, n)
		}
		return
	}
	if n.Turn == 0 && side {
		// Said by the session, not the machine (a file changed on disk, an
		// MCP server is ready): it belongs to the turn under way, or to
		// the last one.
		n.Turn = h.turn
	}
	note := n.Typed()
	if note == nil || h.showSubagent(note) {
		return // a child's: never the parent's turn
	}
	if e, ok := note.(workspace.ErrorReported); ok && e.NotRun() {
		// The refused call's line says it (BashRefusedWhy): once.
		return
	}
	h.track(note)
	h.show(note)
	if _, ok := note.(workspace.TurnStarted); ok && len(h.early) > 0 {
		early := h.early
		h.early = nil
		for _, e := range early {
			e.Turn = n.Turn
			h.show(e.Typed())
		}
	}
	h.answer(n, note)
}

// answer hands a proposal or a plan to whoever answers it, and keeps
// what WaitTurn returns.
func (h *Editor) answer(n workspace.Notification, note workspace.Note) {
	switch note := note.(type) {
	case workspace.ChangeProposed:
		if h.opts.OnProposal != nil {
			go h.opts.OnProposal(note.Proposal)
		}
	case workspace.PlanProposed:
		if h.opts.OnPlan != nil {
			go h.opts.OnPlan(note.Plan)
		}
	case workspace.ErrorReported:
		h.lastError[n.Turn] = n
	case workspace.TurnEnded:
		h.ended[n.Turn] = n
		h.cond.Broadcast()
	}
}

// track follows what the turn is doing, for the progress reports.
func (h *Editor) track(n workspace.Note) {
	now := time.Now()
	if turn := n.Source().Turn; turn != 0 {
		h.turn = turn
	}
	switch n := n.(type) {
	case workspace.StateChanged:
		h.state, h.stateAt = n.State, now
	case workspace.TurnStarted:
		h.messages = 0
	case workspace.RetryScheduled:
		h.retryAt = now.Add(n.Delay)
	case workspace.ToolUpdated:
		h.trackTool(n.Call, now)
	case workspace.TurnEnded:
		clear(h.running)
		clear(h.commands)
	}
}

// trackTool follows a tool call: bash's command once it is known, the
// call while it runs.
func (h *Editor) trackTool(t *workspace.ToolNote, now time.Time) {
	switch t.Status {
	case fsm.ToolPending:
		var args struct {
			Command string `json:"command"`
		}
		if t.Name == "bash" && json.Unmarshal([]byte(t.Arguments), &args) == nil {
			h.commands[t.CallID] = args.Command
		}
	case fsm.ToolRunning:
		r, ok := h.running[t.CallID]
		if !ok {
			r = &runningTool{name: t.Name, detail: h.commands[t.CallID], started: now, reported: now}
			h.running[t.CallID] = r
		}
		if t.Detail != startedDetail {
			r.latest = t.Detail
		}
	case fsm.ToolSucceeded, fsm.ToolFailed, fsm.ToolCancelled:
		delete(h.running, t.CallID)
		delete(h.commands, t.CallID)
	}
}

// show writes a notification in the editor's format, ending the message
// being streamed first when n is not more of its text (nor a state).
func (h *Editor) show(n workspace.Note) {
	turn := n.Source().Turn
	switch n.(type) {
	case nil:
		return
	case workspace.TextRetracted:
		h.retractMessage(turn)
		return
	case workspace.TextDelta, workspace.ReasoningDelta:
	case workspace.StateChanged:
		if h.opts.Format != JSONL {
			return // text mode writes no state, and ends no reasoning for it
		}
	default:
		h.endMessage(turn)
	}
	if h.opts.Format == JSONL {
		workspace.Deliver(n, jsonOut{h})
		return
	}
	if _, ok := n.(workspace.ReasoningDelta); !ok {
		h.endReasoning()
	}
	workspace.Deliver(n, textOut{h})
}

// endMessage completes the assistant message being streamed, if any.
func (h *Editor) endMessage(turn uint64) {
	if h.message.Len() == 0 {
		return
	}
	text := h.message.String()
	h.message.Reset()
	if h.opts.Format == JSONL {
		h.writeEvent(Event{Type: "message_completed", Turn: turn, ID: h.messageID(turn), Text: text})
	} else {
		h.endLine()
	}
	h.messages++
}

// retractMessage abandons the assistant message being streamed: a retry
// answers in its place. JSONL says message_retracted with its id (the
// retry streams under a new id); text mode, which cannot take back what
// it printed, ends the line and says so, dimmed.
func (h *Editor) retractMessage(turn uint64) {
	if h.message.Len() == 0 {
		return
	}
	h.message.Reset()
	if h.opts.Format == JSONL {
		h.writeEvent(Event{Type: "message_retracted", Turn: turn, ID: h.messageID(turn)})
	} else {
		h.endReasoning()
		h.endLine()
		h.write(h.opts.Log, h.paint(colorDim, workspace.RetractWords)+"\n")
	}
	h.messages++
}

func (h *Editor) messageID(turn uint64) string {
	return fmt.Sprintf("msg_%d_%d", turn, h.messages+1)
}

func (h *Editor) writeEvent(ev Event) {
	b, _ := json.Marshal(ev)
	h.write(h.opts.Out, string(append(b, '\n')))
}

// tick sends tool_progress events (JSONL) or refreshes the progress line
// (text on a terminal) until Close.
func (h *Editor) tick() {
	defer close(h.stopped)
	t := time.NewTicker(progressEvery / 4)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-t.C:
			h.mu.Lock()
			if h.opts.Format == JSONL {
				h.sendToolProgress(now)
			} else {
				h.showProgress(now)
			}
			h.mu.Unlock()
		}
	}
}

// startedDetail is the progress message of a call that just started (see
// workspace's runCall); a tool's own messages come after it.
const startedDetail = "running"

// sendToolProgress writes a tool_progress event for each tool that has
// run for progressEvery since it started or was last reported.
func (h *Editor) sendToolProgress(now time.Time) {
	for id, t := range h.running {
		if now.Sub(t.reported) < progressEvery {
			continue
		}
		t.reported = now
		ev := Event{Type: "tool_progress", Turn: h.turn, ID: id, Name: t.name, ElapsedMS: now.Sub(t.started).Milliseconds()}
		if t.detail != "" {
			ev.Message = "running " + clip(t.detail, 80)
		}
		if t.name == "bash" {
			ev.OutputLine = t.latest
		} else if t.latest != "" {
			ev.Message = clip(t.latest, 200)
		}
		h.writeEvent(ev)
	}
}

// write writes s to w; the first failure (a closed pipe) is kept and
// closes Broken, so the caller can stop the turn nobody reads any more.
func (h *Editor) write(w io.Writer, s string) {
	if h.writeErr != nil {
		return
	}
	h.clearProgress()
	h.lastWrite = time.Now()
	if _, err := io.WriteString(w, s); err != nil {
		h.writeErr = err
		close(h.broken)
	}
}

// OutputGone records that nobody reads the output any more (the caller
// saw the reader of a pipe go away) and closes Broken.
func (h *Editor) OutputGone() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.writeErr == nil {
		h.writeErr = io.ErrClosedPipe
		close(h.broken)
	}
}

// Broken is closed once a write to the output failed, e.g. because the
// reader of a pipe went away, or OutputGone was called.
func (h *Editor) Broken() <-chan struct{} { return h.broken }

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// WaitTurn blocks until turn ends (or ctx is done) and returns its
// turn_ended notification and the last error notification of the turn.
func (h *Editor) WaitTurn(ctx context.Context, turn uint64) (ended, lastErr workspace.Notification, err error) {
	stop := context.AfterFunc(ctx, func() { h.mu.Lock(); h.cond.Broadcast(); h.mu.Unlock() })
	defer stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		if n, ok := h.ended[turn]; ok {
			return n, h.lastError[turn], nil
		}
		if ctx.Err() != nil {
			return workspace.Notification{}, workspace.Notification{}, ctx.Err()
		}
		h.cond.Wait()
	}
}

// ApplyEdit implements workspace.Editor: headless, edits go to disk.
func (h *Editor) ApplyEdit(context.Context, workspace.DocumentEdit) error {
	return workspace.ErrUnsupported
}

// BashRefusedWhy is why exec refused a command under tools.bash = "ask"
// and how to allow commands: the first refused call's line says it (the
// model reads it too); the later ones say it shortly.
const BashRefusedWhy = "exec cannot ask: rerun with --approve bash=allow to run commands"

// Approve implements workspace.Editor: headless, there is no one to ask.
// A refused command's line says why and how to allow commands.
func (h *Editor) Approve(_ context.Context, a workspace.Approval) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a.Server != "" { // an MCP tool: once per server
		if h.toldServers == nil {
			h.toldServers = map[string]bool{}
		}
		if !h.toldServers[a.Server] {
			h.toldServers[a.Server] = true
			h.show(workspace.InfoReported{NoteSource: workspace.NoteSource{Turn: a.Turn}, Text: fmt.Sprintf(
				"the MCP tool %s was not called: server %q's tools need approval, and exec cannot ask. "+
					"To let the agent call them, set approve = \"allow\" under [mcp.servers.%s] in loom.toml.", a.Tool, a.Server, a.Server)})
		}
		return false, workspace.ErrUnsupported
	}
	if !h.told {
		h.told = true
		return false, &workspace.CannotAskError{Why: BashRefusedWhy}
	}
	return false, &workspace.CannotAskError{Why: "exec cannot ask (see above)"}
}

// SaveDocuments implements workspace.Editor: headless, nothing is open.
func (h *Editor) SaveDocuments(context.Context, []string) ([]string, error) {
	return nil, workspace.ErrUnsupported
}

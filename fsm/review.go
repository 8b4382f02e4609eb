package fsm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Review mode (Config.ReviewEdits, tools.edits = "review"): a mutating
// call computes its change and writes nothing. The caller reports the
// change with ChangesProposed; the machine hands it to the user in a
// ProposeChanges action and keeps the call open in ExecutingTools until
// ChangesDecided. Accepted hunks are then applied by the caller
// (ApplyChanges), which completes the call as usual with ToolCompleted;
// a proposal rejected whole completes the call at once. Either way the
// model reads the decision in the same turn.

// ChangeKind says what a proposed change does to its file.
type ChangeKind string

// The kinds of change.
const (
	ChangeEdit    ChangeKind = "edit"
	ChangeCreate  ChangeKind = "create"
	ChangeDelete  ChangeKind = "delete"
	ChangeCommand ChangeKind = "command"
)

// Hunk is one part of a proposed change that the user accepts or
// rejects on its own.
type Hunk struct {
	// ID is unique within its proposal and never reused by it.
	ID string
	// Diff is the hunk as a unified diff hunk ("@@ … @@" and its lines).
	Diff string
	// StartLine and EndLine are the 0-based lines of the old text the
	// hunk replaces, EndLine exclusive (StartLine == EndLine: an insert).
	StartLine, EndLine int
}

// FileChange is a proposed change to one file.
type FileChange struct {
	// Path is relative to the workspace root, slash-separated.
	Path string
	Kind ChangeKind
	// Diff is the whole file's unified diff.
	Diff  string
	Hunks []Hunk
}

// ChangesProposed reports that mutating call CallID of turn Turn computed
// Changes and wrote nothing, because edits are reviewed. The call then
// waits for ChangesDecided; the caller sends no ToolCompleted for it
// until an ApplyChanges asks it to apply what was accepted.
//
// A command's changes (Kind ChangeCommand) are proposed the same way
// after the command ran: they are on disk already, and the decision keeps
// (accepted hunks) or discards (rejected hunks) them. Output is then the
// command's own result, which the model reads followed by the decision.
type ChangesProposed struct {
	Turn    uint64
	CallID  string
	Changes []FileChange
	// Output is the command's result (a command's changes only).
	Output string `json:",omitempty"`
}

// ChangesDecided is the user's decision on proposal ID: the hunks in
// Accepted are applied, those in Rejected are not; a hunk named in
// neither is rejected. Comment, if any, is passed on to the model.
// Unreviewed, when set, says the user never decided: what happened
// instead (the file changed while the change waited, the editor could
// not ask); the proposal is then not applied, and the model reads that
// reason, not a rejection by the user.
type ChangesDecided struct {
	ID         string
	Accepted   []string
	Rejected   []string
	Comment    string
	Unreviewed string `json:",omitempty"`
}

// ProposeChanges asks the caller to show proposal ID (the changes of
// call CallID) to the user for review, and to step ChangesDecided with
// the user's answer. Nothing of it may reach a buffer or the disk before.
type ProposeChanges struct {
	Turn    uint64
	ID      string
	CallID  string
	Changes []FileChange
}

// ApplyChanges asks the caller to apply exactly the Accepted hunks of
// proposal ID (three-way, over whatever the user typed meanwhile), then
// to step ToolCompleted for CallID with Result, or with an error result
// saying what could not be applied. For a command's changes (Command
// set), Accepted may be empty: the caller keeps the accepted hunks
// (committed like an edit) and takes the others back off the disk, the
// user's own edits staying.
type ApplyChanges struct {
	Turn     uint64
	ID       string
	CallID   string
	Accepted []string
	// Result is the tool result that tells the model the decision.
	Result string
	// Command marks a command's changes: already on disk.
	Command bool `json:",omitempty"`
}

// pendingProposal is a proposal waiting for the user.
type pendingProposal struct {
	callID string
	hunks  []string // in proposal order
	// command marks a command's changes, output its result, files their
	// paths.
	command bool
	output  string
	files   []string
}

func (ChangesProposed) isEvent() {}
func (ChangesDecided) isEvent()  {}
func (ProposeChanges) isAction() {}
func (ApplyChanges) isAction()   {}

// Describe implements [Event].
func (e ChangesProposed) Describe() string {
	d := fmt.Sprintf("ChangesProposed turn=%d call=%s changes=%s", e.Turn, e.CallID, describeChanges(e.Changes))
	if e.Output != "" {
		d += " output=" + quote(e.Output)
	}
	return d
}

// Describe implements [Event].
func (e ChangesDecided) Describe() string {
	s := fmt.Sprintf("ChangesDecided id=%s accepted=[%s] rejected=[%s]", e.ID, strings.Join(e.Accepted, " "), strings.Join(e.Rejected, " "))
	if e.Comment != "" {
		s += " comment=" + quote(e.Comment)
	}
	if e.Unreviewed != "" {
		s += " unreviewed=" + quote(e.Unreviewed)
	}
	return s
}

// Describe implements [Action].
func (a ProposeChanges) Describe() string {
	return fmt.Sprintf("ProposeChanges turn=%d id=%s call=%s changes=%s", a.Turn, a.ID, a.CallID, describeChanges(a.Changes))
}

// Describe implements [Action].
func (a ApplyChanges) Describe() string {
	d := fmt.Sprintf("ApplyChanges turn=%d id=%s call=%s accepted=[%s] result=%s", a.Turn, a.ID, a.CallID, strings.Join(a.Accepted, " "), quote(a.Result))
	if a.Command {
		d += " command"
	}
	return d
}

func describeChanges(cs []FileChange) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range cs {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %s", c.Kind, c.Path)
		for _, h := range c.Hunks {
			fmt.Fprintf(&b, " %s@%d-%d", h.ID, h.StartLine, h.EndLine)
		}
	}
	b.WriteByte(']')
	return b.String()
}

// proposalID names the proposal of call callID made under request req:
// unique in a conversation, since request ids only grow.
func proposalID(req uint64, callID string) string {
	return strconv.FormatUint(req, 10) + "." + callID
}

// proposalRequest is the request part of a proposal id, 0 if malformed.
func proposalRequest(id string) uint64 {
	head, _, _ := strings.Cut(id, ".")
	n, _ := strconv.ParseUint(head, 10, 64)
	return n
}

// checkProposed validates a ChangesProposed.
func (m *Machine) checkProposed(e ChangesProposed) error {
	if err := m.checkTool(e, e.Turn, e.CallID); err != nil {
		return err
	}
	x := m.execs[m.execByID[e.CallID]]
	switch {
	case !x.Mutating:
		return m.invalid(e, "only a mutating call proposes changes")
	case x.Status == ExecReviewing:
		return m.invalid(e, "the call already waits for a review")
	case len(e.Changes) == 0:
		return m.invalid(e, "no changes")
	}
	seen := map[string]bool{}
	for _, c := range e.Changes {
		if c.Path == "" {
			return m.invalid(e, "a change without a path")
		}
		if len(c.Hunks) == 0 {
			return m.invalid(e, "a change without hunks: "+c.Path)
		}
		for _, h := range c.Hunks {
			if h.ID == "" || seen[h.ID] {
				return m.invalid(e, fmt.Sprintf("hunk id %q is empty or repeated", h.ID))
			}
			seen[h.ID] = true
		}
	}
	return nil
}

// checkDecided validates a ChangesDecided.
func (m *Machine) checkDecided(e ChangesDecided) error {
	p, ok := m.proposals[e.ID]
	if !ok || m.kind != ExecutingTools {
		if req := proposalRequest(e.ID); req > 0 && req <= m.request {
			return m.stale(e)
		}
		return m.invalid(e, "no such proposal")
	}
	for _, id := range e.Accepted {
		if !slices.Contains(p.hunks, id) {
			return m.invalid(e, fmt.Sprintf("no hunk %q in this proposal", id))
		}
	}
	for _, id := range e.Rejected {
		if !slices.Contains(p.hunks, id) {
			return m.invalid(e, fmt.Sprintf("no hunk %q in this proposal", id))
		}
		if slices.Contains(e.Accepted, id) {
			return m.invalid(e, fmt.Sprintf("hunk %q is both accepted and rejected", id))
		}
	}
	return nil
}

// onChangesProposed puts the call up for review: Running -> Reviewing.
func (m *Machine) onChangesProposed(e ChangesProposed) []Action {
	x := &m.execs[m.execByID[e.CallID]]
	id := proposalID(m.request, e.CallID)
	x.Status, x.Progress = ExecReviewing, ReviewWaiting
	var hunks []string
	for _, c := range e.Changes {
		for _, h := range c.Hunks {
			hunks = append(hunks, h.ID)
		}
	}
	if m.proposals == nil {
		m.proposals = map[string]*pendingProposal{}
	}
	p := &pendingProposal{callID: e.CallID, hunks: hunks, output: e.Output}
	for _, c := range e.Changes {
		p.files = append(p.files, c.Path)
		if c.Kind == ChangeCommand {
			p.command = true
		}
	}
	m.proposals[id] = p
	return []Action{
		DisplayToolCall{Turn: m.turn, CallID: x.Call.ID, Name: x.Call.Name, Status: ToolRunning, Detail: ReviewWaiting},
		ProposeChanges{Turn: m.turn, ID: id, CallID: e.CallID, Changes: e.Changes},
	}
}

// ReviewWaiting is the progress text (DisplayToolCall's Detail, status
// running) of a call waiting for the user's review: front ends whose
// protocol has a waiting status show that instead of running.
const ReviewWaiting = "waiting for your review"

// onChangesDecided takes the user's decision: a proposal rejected whole
// completes its call at once; otherwise the call is Running again while
// the caller applies the accepted hunks.
func (m *Machine) onChangesDecided(e ChangesDecided) []Action {
	p := m.proposals[e.ID]
	delete(m.proposals, e.ID)
	var accepted, rejected []string
	for _, id := range p.hunks {
		if slices.Contains(e.Accepted, id) {
			accepted = append(accepted, id)
		} else {
			rejected = append(rejected, id)
		}
	}
	comment := strings.TrimSpace(e.Comment)
	if p.command {
		return m.decideCommand(e.ID, p, accepted, rejected, comment)
	}
	if why := strings.TrimSpace(e.Unreviewed); why != "" {
		return m.onToolCompleted(ToolCompleted{Turn: m.turn, CallID: p.callID, Result: "not applied: " + why + "; nothing was written", IsError: true})
	}
	if len(accepted) == 0 {
		result := "rejected by the user; nothing was written"
		if comment != "" {
			result += ": " + comment
		}
		return m.onToolCompleted(ToolCompleted{Turn: m.turn, CallID: p.callID, Result: result, IsError: true})
	}
	result := "applied"
	if len(rejected) > 0 {
		noun := "hunk"
		if len(rejected) > 1 {
			noun = "hunks"
		}
		result = fmt.Sprintf("applied in part: %s %s rejected by the user", noun, strings.Join(rejected, ", "))
		if comment != "" {
			result += ": " + comment
		}
	} else if comment != "" {
		result += "; the user says: " + comment
	}
	x := &m.execs[m.execByID[p.callID]]
	x.Status, x.Progress = ExecRunning, "applying"
	return []Action{
		DisplayToolCall{Turn: m.turn, CallID: x.Call.ID, Name: x.Call.Name, Status: ToolRunning, Detail: "applying"},
		ApplyChanges{Turn: m.turn, ID: e.ID, CallID: p.callID, Accepted: accepted, Result: result},
	}
}

// decideCommand answers the review of a command's changes: the caller
// keeps the accepted hunks and takes the others back, then completes the
// call with the command's output and the decision.
func (m *Machine) decideCommand(id string, p *pendingProposal, accepted, rejected []string, comment string) []Action {
	files := strings.Join(p.files, ", ")
	var words string
	switch {
	case len(accepted) == 0:
		words = fmt.Sprintf("the user discarded this command's changes to %s: those files are as they were before it", files)
	case len(rejected) == 0:
		words = fmt.Sprintf("the user kept this command's changes to %s", files)
	default:
		noun := "hunk"
		if len(rejected) > 1 {
			noun = "hunks"
		}
		words = fmt.Sprintf("the user kept this command's changes to %s in part: %s %s discarded", files, noun, strings.Join(rejected, ", "))
	}
	if comment != "" {
		words += "; the user says: " + comment
	}
	x := &m.execs[m.execByID[p.callID]]
	x.Status, x.Progress = ExecRunning, "applying"
	return []Action{
		DisplayToolCall{Turn: m.turn, CallID: x.Call.ID, Name: x.Call.Name, Status: ToolRunning, Detail: "applying"},
		ApplyChanges{Turn: m.turn, ID: id, CallID: p.callID, Accepted: accepted, Result: commandResult(p.output, words), Command: true},
	}
}

// commandResult is a command's result followed by loom's note.
func commandResult(output, note string) string {
	return output + "\n[loom] " + note + "."
}

// cancelledReview is the result of reviewing call callID cut short by
// a cancel.
func (m *Machine) cancelledReview(callID string) string {
	for _, p := range m.proposals {
		if p.callID == callID && p.command {
			return commandResult(p.output, "the turn was cancelled before the user decided on this command's changes: they stay on disk, not committed")
		}
	}
	return rejectedByCancel
}

// PendingProposals returns the ids of the proposals waiting for the
// user, sorted.
func (m *Machine) PendingProposals() []string {
	ids := make([]string, 0, len(m.proposals))
	for id := range m.proposals {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// rejectedByCancel is the tool result of a call whose review the user
// cut short by cancelling the turn.
const rejectedByCancel = "rejected: the user cancelled the turn before deciding; nothing was written"

// ProposalCall returns the call of proposal id and its hunks in
// proposal order; ok is false when no such proposal waits.
func (m *Machine) ProposalCall(id string) (callID string, hunks []string, ok bool) {
	p, ok := m.proposals[id]
	if !ok {
		return "", nil, false
	}
	return p.callID, slices.Clone(p.hunks), true
}

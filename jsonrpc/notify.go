package jsonrpc

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// Methods of the loom notifications (server -> client), sent to clients
// that declare experimental.loom.
const (
	// MethodDisplayMessage carries DisplayMessageParams.
	MethodDisplayMessage = "loom/displayMessage"
	// MethodToolCall carries ToolCallParams.
	MethodToolCall = "loom/toolCall"
	// MethodState carries StateParams.
	MethodState = "loom/state"
	// MethodSaveDocuments is a request: SaveDocumentsParams ->
	// SaveDocumentsResult.
	MethodSaveDocuments = "loom/saveDocuments"
	// MethodTurnEnded carries TurnEndedParams.
	MethodTurnEnded = "loom/turnEnded"
	// MethodCommit carries CommitParams.
	MethodCommit = "loom/commit"
	// MethodCommandChanges carries CommandChangesParams.
	MethodCommandChanges = "loom/commandChanges"
	// MethodNotice carries NoticeParams.
	MethodNotice = "loom/notice"
)

// Kinds of NoticeParams.
const (
	// NoticeInfo is a plain information ("compacting the conversation
	// (…)", "resumed the conversation: …").
	NoticeInfo = "info"
	// NoticeCompacted says the conversation was compacted; the summary is
	// in loom.history.
	NoticeCompacted = "compacted"
)

// NoticeParams is a line of information for the chat, between the
// streamed messages: what the session did on its own (compaction,
// resumption). Turn is the current (or last) turn.
type NoticeParams struct {
	Folder string `json:"folder"`
	// Conversation is the id of the conversation it concerns; absent
	// for the folder's own notices.
	Conversation string `json:"conversation,omitempty"`
	Turn         uint64 `json:"turn"`
	Kind         string `json:"kind"`
	Text         string `json:"text"`
}

// DisplayMessageParams is a coalesced piece of streamed assistant text,
// or, with Kind "thought", of the model's reasoning. Seq counts the
// folder's displayMessage notifications (of both kinds) from 1, so a gap
// or reordering is detectable.
type DisplayMessageParams struct {
	Folder string `json:"folder"`
	// Conversation is the id of the conversation it concerns; absent
	// for the folder's own notices.
	Conversation string `json:"conversation,omitempty"`
	Turn         uint64 `json:"turn"`
	Seq          uint64 `json:"seq"`
	Text         string `json:"text"`
	// Kind is absent for the answer's text and KindThought for the
	// model's reasoning, which a client shows apart (collapsed) and which
	// is not part of the answer.
	Kind string `json:"kind,omitempty"`
	// Replace, when true, replaces the turn's last block of answer text
	// (what streamed since the current model request began) by Text
	// instead of appending: the request failed partway and a retry
	// answers in its place. Text is then "", and a client drops the
	// abandoned text.
	Replace bool `json:"replace,omitempty"`
}

// KindThought is the DisplayMessageParams.Kind of the model's reasoning.
const KindThought = "thought"

// ToolCallParams is a tool call's new status.
type ToolCallParams struct {
	Folder string `json:"folder"`
	// Conversation is the id of the conversation it concerns; absent
	// for the folder's own notices.
	Conversation string `json:"conversation,omitempty"`
	Turn         uint64 `json:"turn"`
	ID           string `json:"id"`
	Name         string `json:"name"`
	// Summary says what the call does (its arguments, shortened).
	Summary string `json:"summary"`
	// Status is streaming, pending, running, succeeded, failed or
	// cancelled.
	Status string `json:"status"`
	// Progress is the latest detail: output so far, or the result.
	Progress string `json:"progress,omitempty"`
	// Diff is the unified diff of an applied edit.
	Diff string `json:"diff,omitempty"`
	// View is how the call shows (its kind, title, label and file),
	// worded by the server; absent while the arguments are unknown.
	View *workspace.ToolView `json:"view,omitempty"`
}

// StateParams is a session's new state. Turn is the current (or, once
// back to WaitingForUserInput, the last) turn.
type StateParams struct {
	Folder string `json:"folder"`
	// Conversation is the id of the conversation it concerns; absent
	// for the folder's own notices.
	Conversation string `json:"conversation,omitempty"`
	State        string `json:"state"`
	Turn         uint64 `json:"turn"`
	// Usage and TotalUsage are the token usage of the turn that ended
	// and of the conversation; set when the state is WaitingForUserInput.
	Usage      *fsm.Usage `json:"usage,omitempty"`
	TotalUsage *fsm.Usage `json:"totalUsage,omitempty"`
}

// TurnEndedParams says how a turn ended (done, failed or cancelled) and
// the tokens its model calls used.
type TurnEndedParams struct {
	Folder string `json:"folder"`
	// Conversation is the id of the conversation it concerns; absent
	// for the folder's own notices.
	Conversation string    `json:"conversation,omitempty"`
	Turn         uint64    `json:"turn"`
	Outcome      string    `json:"outcome"`
	Usage        fsm.Usage `json:"usage"`
	// TotalUsage is the conversation's usage so far.
	TotalUsage *fsm.Usage `json:"totalUsage,omitempty"`
}

// CommitParams is the auto-commit of a turn's edits.
type CommitParams struct {
	Folder string `json:"folder"`
	// Conversation is the id of the conversation it concerns; absent
	// for the folder's own notices.
	Conversation string   `json:"conversation,omitempty"`
	Turn         uint64   `json:"turn"`
	SHA          string   `json:"sha"`
	Message      string   `json:"message"`
	Files        []string `json:"files"`
	// Notes are what the user must know besides (hooks not run and why,
	// staged changes kept or merged, files left uncommitted and why);
	// never null.
	Notes []string `json:"notes"`
}

// CommandChangesParams are the files the agent's commands changed in a
// turn, reported and not committed: loom.commit {paths} keeps (commits)
// them, loom.discard {paths} puts the files back as they were before
// the command (the user's own edits kept).
type CommandChangesParams struct {
	Folder string `json:"folder"`
	// Conversation is the id of the conversation it concerns; absent
	// for the folder's own notices.
	Conversation string          `json:"conversation,omitempty"`
	Turn         uint64          `json:"turn"`
	Changes      []CommandChange `json:"changes"`
}

// CommandChange is one file a command changed.
type CommandChange struct {
	// Path is the file's absolute path, Rel relative to the repository.
	Path    string `json:"path"`
	Rel     string `json:"rel"`
	Command string `json:"command"`
	Turn    uint64 `json:"turn"`
	Created bool   `json:"created,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
	Size    int64  `json:"size"`
	// Diff is the unified diff from the file just before the command; "" when
	// Binary or too large to show.
	Diff   string `json:"diff,omitempty"`
	Binary bool   `json:"binary,omitempty"`
	// Held tells a protected name the command created (a .git, a
	// .loom.toml), moved out of the folder until kept: loom.commit puts it
	// back (no commit), loom.discard deletes it.
	Held bool `json:"held,omitempty"`
}

// commandChanges converts the workspace's list for the wire.
func commandChanges(cs []workspace.CommandChange) []CommandChange {
	out := make([]CommandChange, len(cs))
	for i, c := range cs {
		out[i] = CommandChange{Path: c.Path, Rel: c.Rel, Command: c.Command, Turn: c.Turn, Created: c.Created, Deleted: c.Deleted, Size: c.Size, Diff: c.Diff, Binary: c.Binary, Held: c.Held}
	}
	return out
}

// commandChangesWords says a turn's command changes for people.
func commandChangesWords(cs []workspace.CommandChange) string {
	byCmd := map[string][]string{}
	var cmds []string
	for _, c := range cs {
		if _, ok := byCmd[c.Command]; !ok {
			cmds = append(cmds, c.Command)
		}
		byCmd[c.Command] = append(byCmd[c.Command], c.Rel)
	}
	var parts []string
	for _, cmd := range cmds {
		parts = append(parts, fmt.Sprintf("changed by `%s` — not committed: %s", truncate(cmd, 80), strings.Join(byCmd[cmd], ", ")))
	}
	return strings.Join(parts, "; ") + ". Keep (commit) with loom.commit {paths}, or discard (back to before the command, your edits kept) with loom.discard {paths}."
}

// maxAnswer bounds the final answer shown to a client without
// experimental.loom.
const maxAnswer = 16 << 10

// folderOut turns one folder's notifications into LSP messages. It is
// owned by the folder's outbox goroutine.
type folderOut struct {
	s      *Server
	folder string
	// conversation is the conversation whose notifications these are, ""
	// for the folder's own notices.
	conversation string
	// seq counts the folder's displayMessages, of all its conversations
	// (shared by their outboxes).
	seq *atomic.Uint64
	// answer is the text since the turn's last tool call: the final answer
	// shown to a client without experimental.loom.
	answer strings.Builder
	// logLine is streamed text of a line not yet sent to a client without
	// experimental.loom (it gets whole lines).
	logLine strings.Builder
	turn    *progress            // the turn's work-done progress, or nil
	tools   map[string]*progress // by call id
	// frame is reused to encode each loom/displayMessage.
	frame []byte
}

func newFolderOut(s *Server, folder, conversation string, seq *atomic.Uint64) *folderOut {
	return &folderOut{s: s, folder: folder, conversation: conversation, seq: seq, tools: map[string]*progress{}}
}

func (f *folderOut) caps() clientCaps {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	return f.s.caps
}

func (f *folderOut) label() string { return "Loom (" + filepath.Base(f.folder) + ")" }

// ShowMessageParams is window/showMessage's params with the conversation
// the message comes from: LSP clients ignore loom; ours draw the message
// in that conversation, not in the one they show.
type ShowMessageParams struct {
	Type    protocol.MessageType `json:"type"`
	Message string               `json:"message"`
	Loom    MessageSource        `json:"loom"`
}

// MessageSource names the folder and conversation a message is about.
type MessageSource struct {
	Folder       string `json:"folder"`
	Conversation string `json:"conversation,omitempty"`
}

// show sends window/showMessage, naming this conversation to a client
// that declared experimental.loom; a generic client gets LSP's members
// only (eglot rejects a message with any other).
func (f *folderOut) show(typ protocol.MessageType, text string) {
	if !f.caps().loom {
		f.s.showMessage(typ, text)
		return
	}
	f.s.notify(context.Background(), protocol.MethodWindowShowMessage, &ShowMessageParams{
		Type: typ, Message: text, Loom: MessageSource{Folder: f.folder, Conversation: f.conversation},
	})
}

// send sends n, through the method of folderOut for its type.
func (f *folderOut) send(n workspace.Notification) {
	note := n.Typed()
	if note == nil {
		f.s.log.Debug("unknown notification kind", "kind", n.Kind)
		return
	}
	workspace.Deliver(note, f)
}

var _ workspace.NoteHandler = (*folderOut)(nil)

// TurnStarted begins the turn's work-done progress.
func (f *folderOut) TurnStarted(n workspace.TurnStarted) {
	f.answer.Reset()
	f.endAll()
	f.turn = f.s.beginProgress(f.folder, f.label(), truncate(firstLine(n.Prompt), 80), true)
}

// TextDelta sends streamed text (sendText).
func (f *folderOut) TextDelta(n workspace.TextDelta) { f.sendText(n.Turn, []byte(n.Text)) }

// StateChanged sends loom/state to a loom client.
func (f *folderOut) StateChanged(n workspace.StateChanged) {
	if f.caps().loom {
		f.s.notify(context.Background(), MethodState, stateParams(f.folder, f.conversation, n))
	}
}

// ErrorReported shows an error as window/showMessage.
func (f *folderOut) ErrorReported(n workspace.ErrorReported) {
	typ := protocol.MessageTypeError
	if !f.caps().loom && (n.Trust || n.NotRun()) {
		// Settings held back until trusted, a command not run because
		// no one could approve it: news the user acts on, not failures.
		// (Our plugins show them their own way.)
		typ = protocol.MessageTypeWarning
	}
	f.show(typ, f.label()+": "+n.Text)
}

// RetryScheduled reports the retry in the turn's progress and as a
// warning.
func (f *folderOut) RetryScheduled(n workspace.RetryScheduled) {
	msg := n.Words()
	f.turn.report(msg)
	f.show(protocol.MessageTypeWarning, f.label()+": "+msg)
}

// Committed sends loom/commit (and a log line) to a loom client; a
// generic client hides log lines, so it is shown the commit and its
// notes, which the user must see.
func (f *folderOut) Committed(n workspace.Committed) {
	c := n.Commit
	notes := c.Notes
	if notes == nil {
		notes = []string{}
	}
	line := fmt.Sprintf("%s: committed %s: %s", f.label(), shortSHA(c.SHA), firstLine(c.Message))
	if len(notes) > 0 {
		line += "; " + strings.Join(notes, "; ")
	}
	if !f.caps().loom {
		f.show(protocol.MessageTypeInfo, line)
		return
	}
	f.s.notify(context.Background(), MethodCommit, &CommitParams{Folder: f.folder, Conversation: f.conversation, Turn: n.Turn, SHA: c.SHA, Message: c.Message, Files: c.Files, Notes: notes})
	f.s.logMessage(protocol.MessageTypeInfo, line)
}

// CommandsChanged sends loom/commandChanges (and a log line) to a loom
// client; a generic client is shown the list, and the diffs go to its
// log.
func (f *folderOut) CommandsChanged(n workspace.CommandsChanged) {
	words := f.label() + ": " + commandChangesWords(n.Changes)
	if f.caps().loom {
		f.s.notify(context.Background(), MethodCommandChanges, &CommandChangesParams{Folder: f.folder, Conversation: f.conversation, Turn: n.Turn, Changes: commandChanges(n.Changes)})
		f.s.logMessage(protocol.MessageTypeInfo, words)
		return
	}
	f.show(protocol.MessageTypeInfo, words)
	for _, c := range n.Changes {
		if c.Diff != "" {
			f.s.logMessage(protocol.MessageTypeInfo, f.label()+": "+c.Diff)
		}
	}
}

// InfoReported sends loom/notice to a loom client, and a log line (a
// message, to a generic client, when the user must see it).
func (f *folderOut) InfoReported(n workspace.InfoReported) {
	loom := f.caps().loom
	if loom {
		f.s.notify(context.Background(), MethodNotice, &NoticeParams{Folder: f.folder, Conversation: f.conversation, Turn: n.Turn, Kind: NoticeInfo, Text: n.Text})
	}
	if n.Visible && !loom {
		f.show(protocol.MessageTypeInfo, f.label()+": "+n.Text)
	} else {
		f.s.logMessage(protocol.MessageTypeInfo, f.label()+": "+n.Text)
	}
}

// Compacted sends loom/notice (kind compacted) and a log line.
func (f *folderOut) Compacted(n workspace.Compacted) {
	text := compactedWords(n.Compaction)
	if f.caps().loom {
		f.s.notify(context.Background(), MethodNotice, &NoticeParams{Folder: f.folder, Conversation: f.conversation, Turn: n.Turn, Kind: NoticeCompacted, Text: text})
	}
	f.s.logMessage(protocol.MessageTypeInfo, f.label()+": "+text)
}

// TurnEnded ends the turn's progress and sends loom/turnEnded; a
// generic client is shown the turn's final answer.
func (f *folderOut) TurnEnded(n workspace.TurnEnded) {
	f.flushLog()
	f.endAll()
	defer f.answer.Reset()
	if f.caps().loom {
		f.s.notify(context.Background(), MethodTurnEnded, &TurnEndedParams{Folder: f.folder, Conversation: f.conversation, Turn: n.Turn, Outcome: string(n.Outcome), Usage: n.Usage, TotalUsage: n.TotalUsage})
		return
	}
	if f.answer.Len() > 0 {
		answer := f.answer.String()
		if len(answer) >= maxAnswer {
			answer = truncate(answer, maxAnswer) + " (see the log for the rest)"
		}
		f.show(protocol.MessageTypeInfo, f.label()+": "+strings.TrimSpace(answer))
	}
}

// DiagnosticsReported sends nothing: the call that reports them carries
// them to the model, and the editor shows its own diagnostics.
func (f *folderOut) DiagnosticsReported(workspace.DiagnosticsReported) {}

// compactedWords says what a compaction did, for people.
func compactedWords(c *workspace.CompactionNote) string {
	if c == nil {
		return "compacted the conversation; the summary is in loom.history"
	}
	return fmt.Sprintf("compacted the conversation: %d message(s) replaced by a summary, about %d tokens now; the summary is in loom.history", c.Dropped, c.Tokens)
}

// sendText sends a coalesced piece of streamed text. For a loom client
// it encodes the loom/displayMessage itself, into a reused buffer, and
// writes it to the stream directly: a streamed notification costs no
// allocation (issue 16 item 3). text is not kept.
func (f *folderOut) sendText(turn uint64, text []byte) {
	seq := f.seq.Add(1)
	if f.caps().loom {
		f.frame = appendDisplayMessage(f.frame[:0], f.folder, f.conversation, turn, seq, text)
		if err := f.s.stream.writeBody(f.frame); err != nil {
			f.s.log.Debug("notify failed", "method", MethodDisplayMessage, "err", err)
		}
		if cap(f.frame) > 1<<20 {
			f.frame = nil
		}
	} else {
		f.logText(string(text))
	}
	if f.answer.Len() < maxAnswer {
		f.answer.Write(text)
	}
}

// TextRetracted tells the client to drop the answer text of the failed
// request: loom/displayMessage with replace: true for a loom client; a
// line in the log for others, which cannot take back what they logged.
func (f *folderOut) TextRetracted(n workspace.TextRetracted) {
	turn := n.Turn
	f.answer.Reset()
	if f.caps().loom {
		f.s.notify(context.Background(), MethodDisplayMessage, &DisplayMessageParams{
			Folder: f.folder, Conversation: f.conversation, Turn: turn, Seq: f.seq.Add(1), Replace: true,
		})
		return
	}
	f.flushLog()
	f.s.logMessage(protocol.MessageTypeLog, workspace.RetractWords)
}

// appendDisplayMessage appends the JSON-RPC notification
// loom/displayMessage with DisplayMessageParams{folder, turn, seq, text}.
// Invalid UTF-8 is replaced by U+FFFD, as encoding/json does.
func appendDisplayMessage(b []byte, folder, conversation string, turn, seq uint64, text []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":"`+MethodDisplayMessage+`","params":{"folder":`...)
	b, _ = jsontext.AppendQuote(b, folder)
	if conversation != "" {
		b = append(b, `,"conversation":`...)
		b, _ = jsontext.AppendQuote(b, conversation)
	}
	b = append(b, `,"turn":`...)
	b = strconv.AppendUint(b, turn, 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"text":`...)
	b, _ = jsontext.AppendQuote(b, text)
	return append(b, "}}"...)
}

// ToolUpdated sends loom/toolCall to a loom client (a log line to
// others once the call runs), and the call's work-done progress.
func (f *folderOut) ToolUpdated(n workspace.ToolUpdated) {
	t := n.Call
	f.answer.Reset()
	f.flushLog()
	if f.caps().loom {
		f.s.notify(context.Background(), MethodToolCall, &ToolCallParams{
			Folder: f.folder, Conversation: f.conversation, Turn: n.Turn, ID: t.CallID, Name: t.Name,
			Summary: truncate(oneLine(t.Arguments), 200), Status: string(t.Status),
			Progress: t.Detail, Diff: t.Diff, View: toolView(t.Name, t.Arguments),
		})
	} else if t.Status != fsm.ToolStreaming && t.Status != fsm.ToolPending {
		f.s.logMessage(protocol.MessageTypeInfo, toolStatusLine(f.label(), t))
	}
	switch t.Status {
	case fsm.ToolRunning:
		if f.tools[t.CallID] == nil {
			f.tools[t.CallID] = f.s.beginProgress(f.folder, t.Name, truncate(oneLine(t.Arguments), 80), false)
		} else {
			f.tools[t.CallID].report(truncate(oneLine(t.Detail), 80))
		}
	case fsm.ToolSucceeded, fsm.ToolFailed, fsm.ToolCancelled:
		if p := f.tools[t.CallID]; p != nil {
			p.end(string(t.Status))
			delete(f.tools, t.CallID)
		}
	}
}

// toolView words a call whose arguments are known; nil otherwise.
func toolView(name, arguments string) *workspace.ToolView {
	if arguments == "" {
		return nil
	}
	v := workspace.ViewTool(name, arguments)
	return &v
}

// toolStatusLine is a tool call's status for a client's log: "Loom (x):
// bash running", then the detail unless it only repeats the status.
func toolStatusLine(label string, t *workspace.ToolNote) string {
	line := fmt.Sprintf("%s: %s %s", label, t.Name, t.Status)
	if d := truncate(oneLine(t.Detail), 200); d != "" && !strings.EqualFold(d, string(t.Status)) {
		line += ": " + d
	}
	return line
}

// logText sends streamed text to a client without experimental.loom as
// window/logMessage, one message per complete line; the rest of a line
// waits for its newline, a tool call or the turn's end (flushLog).
func (f *folderOut) logText(text string) {
	f.logLine.WriteString(text)
	buffered := f.logLine.String()
	cut := strings.LastIndexByte(buffered, '\n')
	if cut < 0 {
		return
	}
	for _, line := range strings.Split(buffered[:cut], "\n") {
		f.s.notify(context.Background(), protocol.MethodWindowLogMessage, &protocol.LogMessageParams{Type: protocol.MessageTypeLog, Message: strings.TrimSuffix(line, "\r")})
	}
	f.logLine.Reset()
	f.logLine.WriteString(buffered[cut+1:])
}

// flushLog sends the text of an unfinished line, if any.
func (f *folderOut) flushLog() {
	if f.logLine.Len() == 0 {
		return
	}
	f.s.notify(context.Background(), protocol.MethodWindowLogMessage, &protocol.LogMessageParams{Type: protocol.MessageTypeLog, Message: f.logLine.String()})
	f.logLine.Reset()
}

// endAll ends every open progress of the folder.
func (f *folderOut) endAll() {
	for id, p := range f.tools {
		p.end("")
		delete(f.tools, id)
	}
	if f.turn != nil {
		f.turn.end("")
		f.turn = nil
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

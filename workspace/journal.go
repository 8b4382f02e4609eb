package workspace

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/secret"
)

// The journal is a JSONL file per workspace folder, in the user's state
// directory ($XDG_STATE_HOME/loom, else ~/.local/state/loom; never in the
// repository). Its first line is a header:
//
//	{"journal":"loom-lsp","version":1,"folder":"/abs/folder","created":"2026-01-02T15:04:05Z"}
//
// (folder and creation time give the conversation its id, see
// conversationID)
// and every other line is one record: the machine configuration the
// following events were stepped under, or one event the session's machine
// accepted, tagged with its type:
//
//	{"t":"config","config":{"SystemPrompt":"…","Tools":{…},…}}
//	{"t":"UserInput","e":{"Text":"fix the bug"}}
//
// Each record is written with a single write(2), so a killed daemon loses
// nothing it stepped (at worst the line being written is torn), except the
// text of a message still streaming: a message's text deltas are kept in
// memory and written as one LlmTextDelta record just before the next other
// event (the LlmCompleted that ends the message, a tool call, an error, a
// cancel), so a turn's text is stored once, not one line per chunk, and a
// completed message is never lost. The file is fsynced at turn boundaries. Events hold the conversation only: API keys
// live in the environment and never reach the machine.

// journalVersion is the version of the journal format. A journal of
// another version is renamed aside, not read.
const journalVersion = 1

// journalMagic is the header's "journal" value.
const journalMagic = "loom-lsp"

type journalHeader struct {
	Journal string    `json:"journal"`
	Version int       `json:"version"`
	Folder  string    `json:"folder"`
	Created time.Time `json:"created"`
}

// unjournaledConversationID returns a random id for a conversation that
// is not journaled, in the form of conversationID's.
func unjournaledConversationID() string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return "loom-" + hex.EncodeToString(b[:])
}

// journalRecord is one line after the header. Type is "config" (Config is
// set) or the name of an fsm event type (Event holds it).
type journalRecord struct {
	Type   string          `json:"t"`
	Event  json.RawMessage `json:"e,omitempty"`
	Config *fsm.Config     `json:"config,omitempty"`
	// Commit is set for "commit" and "commit-end" (commitjournal.go).
	Commit *commitRecord `json:"commit,omitempty"`
	// Restore is set for "restore" and "restore-end" (restores.go).
	Restore *restoreRecord `json:"restore,omitempty"`
}

// eventTag returns the journal type tag of ev, "" for an event that is not
// journaled (ShutdownRequested: stopping the daemon is not part of the
// conversation; LlmReasoningDelta: the model's reasoning changes nothing
// in the machine, is never sent back to the model, and would only make
// the journal larger).
func eventTag(ev fsm.Event) string {
	switch ev.(type) {
	case fsm.UserInput:
		return "UserInput"
	case fsm.LlmTextDelta:
		return "LlmTextDelta"
	case fsm.LlmToolCallDelta:
		return "LlmToolCallDelta"
	case fsm.LlmCompleted:
		return "LlmCompleted"
	case fsm.LlmError:
		return "LlmError"
	case fsm.ToolProgress:
		return "ToolProgress"
	case fsm.ToolCompleted:
		return "ToolCompleted"
	case fsm.PostToolsHookCompleted:
		return "PostToolsHookCompleted"
	case fsm.RetryTimeoutFired:
		return "RetryTimeoutFired"
	case fsm.Cancel:
		return "Cancel"
	case fsm.FilesChanged:
		return "FilesChanged"
	case fsm.Reset:
		return "Reset"
	case fsm.DropQueued:
		return "DropQueued"
	case fsm.ApprovalDecided:
		return "ApprovalDecided"
	case fsm.HooksDecided:
		return "HooksDecided"
	case fsm.Compact:
		return "Compact"
	case fsm.AdvanceIDs:
		return "AdvanceIDs"
	case fsm.Load:
		return "Load"
	case fsm.ChangesProposed:
		return "ChangesProposed"
	case fsm.ChangesDecided:
		return "ChangesDecided"
	case fsm.Rewind:
		return "Rewind"
	case fsm.Redo:
		return "Redo"
	case fsm.SelectModel:
		return "SelectModel"
	case fsm.SetMode:
		return "SetMode"
	case fsm.PlanDecided:
		return "PlanDecided"
	}
	return ""
}

func decodeAs[T fsm.Event](raw json.RawMessage) (fsm.Event, error) {
	var ev T
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// decodeEvent is the inverse of encoding an event under eventTag.
func decodeEvent(tag string, raw json.RawMessage) (fsm.Event, error) {
	if ev, ok := decodeTextEvent(tag, raw); ok {
		return ev, nil
	}
	switch tag {
	case "UserInput":
		return decodeAs[fsm.UserInput](raw)
	case "LlmTextDelta":
		return decodeAs[fsm.LlmTextDelta](raw)
	case "LlmToolCallDelta":
		return decodeAs[fsm.LlmToolCallDelta](raw)
	case "LlmCompleted":
		return decodeAs[fsm.LlmCompleted](raw)
	case "LlmError":
		return decodeAs[fsm.LlmError](raw)
	case "ToolProgress":
		return decodeAs[fsm.ToolProgress](raw)
	case "ToolCompleted":
		return decodeAs[fsm.ToolCompleted](raw)
	case "PostToolsHookCompleted":
		return decodeAs[fsm.PostToolsHookCompleted](raw)
	case "RetryTimeoutFired":
		return decodeAs[fsm.RetryTimeoutFired](raw)
	case "Cancel":
		return decodeAs[fsm.Cancel](raw)
	case "FilesChanged":
		return decodeAs[fsm.FilesChanged](raw)
	case "Reset":
		return decodeAs[fsm.Reset](raw)
	case "DropQueued":
		return decodeAs[fsm.DropQueued](raw)
	case "ApprovalDecided":
		return decodeAs[fsm.ApprovalDecided](raw)
	case "HooksDecided":
		return decodeAs[fsm.HooksDecided](raw)
	case "SelectModel":
		return decodeAs[fsm.SelectModel](raw)
	case "Compact":
		return decodeAs[fsm.Compact](raw)
	case "AdvanceIDs":
		return decodeAs[fsm.AdvanceIDs](raw)
	case "Load":
		return decodeAs[fsm.Load](raw)
	case "ChangesProposed":
		return decodeAs[fsm.ChangesProposed](raw)
	case "ChangesDecided":
		return decodeAs[fsm.ChangesDecided](raw)
	case "Rewind":
		return decodeAs[fsm.Rewind](raw)
	case "Redo":
		return decodeAs[fsm.Redo](raw)
	case "SetMode":
		return decodeAs[fsm.SetMode](raw)
	case "PlanDecided":
		return decodeAs[fsm.PlanDecided](raw)
	}
	return nil, fmt.Errorf("unknown event type %q", tag)
}

// defaultStateDir is $XDG_STATE_HOME/loom, else ~/.local/state/loom.
func defaultStateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "loom"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "loom"), nil
}

// journalPath names the journal of folder in dir: the folder's base name,
// made safe, and a short hash of its full path, so that two folders with
// the same name do not share a journal.
func journalPath(dir, folder string) string {
	sum := sha256.Sum256([]byte(folder))
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, filepath.Base(folder))
	name = strings.TrimLeft(name, ".")
	if len(name) > 48 {
		name = name[:48]
	}
	if name == "" {
		name = "root"
	}
	return filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:6])+".jsonl")
}

// journal appends records to a session's journal file. It is owned by the
// session's goroutine.
type journal struct {
	path   string
	folder string
	f      *os.File
	dirty  bool   // written since the last sync
	id     string // the conversation's id (see journalHeader)
	// redactor, when set, masks secrets in each line before it is
	// written, but in the records of what the model wrote (modelWritten),
	// where it seals the keys it knows (secret.Redactor.Seal: a hash in
	// the key's place, given back on replay) and keeps the rest exactly:
	// the conversation the model continues after a resume is exactly the
	// one it had, its code byte for byte, and no key is at rest.
	redactor *secret.Redactor
	// text holds the text deltas of the message streaming, not written
	// yet; textRequest is their request.
	text        strings.Builder
	textRequest uint64
}

// setRedactor makes j mask what r masks.
func (j *journal) setRedactor(r *secret.Redactor) {
	j.redactor = r
}

// modelWritten are the events that hold what the model wrote (its text,
// reasoning, tool calls and the data its server requires echoed back):
// journaled exactly.
var modelWritten = map[string]bool{"LlmTextDelta": true, "LlmReasoningDelta": true, "LlmCompleted": true, "LlmToolCallDelta": true}

// createJournal starts a new journal at path, with its header.
func createJournal(path, folder string, now time.Time) (*journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &journal{path: path, folder: folder, f: f, id: conversationID(folder, now)}
	if err := j.writeLine(journalHeader{Journal: journalMagic, Version: journalVersion, Folder: folder, Created: now.UTC()}); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// appendJournal opens an existing, already validated journal for
// appending, cutting it at size (dropping a torn last line).
func appendJournal(path, folder string, size int64, id string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: %w", err)
	}
	return &journal{path: path, folder: folder, f: f, id: id}, nil
}

func (j *journal) writeLine(v any) error { return j.writeLineMasked(v, true) }

// writeLineMasked writes v as one line, masked when mask is set.
func (j *journal) writeLineMasked(v any, mask bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("journal: encode: %w", err)
	}
	switch {
	case j.redactor != nil && mask:
		b = j.redactor.Bytes(b)
	case j.redactor != nil:
		// What the model wrote: the keys loom knows are sealed (a hash
		// in their place, given back on replay while the key is known),
		// everything else is kept exactly.
		b = []byte(j.redactor.Seal(string(b)))
	}
	b = append(b, '\n')
	if _, err := j.f.Write(b); err != nil {
		return fmt.Errorf("journal: write %s: %w", j.path, err)
	}
	j.dirty = true
	return nil
}

// appendEvent records an event the machine accepted. Text deltas are
// coalesced until the next other event.
func (j *journal) appendEvent(ev fsm.Event) error {
	tag := eventTag(ev)
	if tag == "" {
		return nil
	}
	switch e := ev.(type) {
	case fsm.LlmTextDelta:
		if j.textPending() && e.Request != j.textRequest {
			if err := j.flushText(true); err != nil {
				return err
			}
		}
		j.textRequest = e.Request
		j.text.WriteString(e.Text)
		return nil
	case fsm.LlmToolCallDelta:
		// The machine ignores the arguments' fragments: LlmCompleted
		// carries each call's whole arguments, journaled (and masked)
		// whole. A fragment of a secret is not journaled.
		e.ArgumentsDelta = ""
		ev = e
	}
	if err := j.flushText(endsText(ev, j.textRequest)); err != nil {
		return err
	}
	return j.writeEvent(tag, ev)
}

// textPending reports whether text of j.textRequest is not all written.
func (j *journal) textPending() bool {
	return j.text.Len() > 0
}

// endsText reports whether ev, journaled while the text of request
// streams, may end that text; the events that may come in the middle of
// a message do not, so that a secret the message holds across them is
// masked whole.
func endsText(ev fsm.Event, request uint64) bool {
	switch e := ev.(type) {
	case fsm.LlmToolCallDelta:
		return e.Request != request
	case fsm.FilesChanged, fsm.UserInput, fsm.DropQueued:
		return false
	}
	return true
}

// flushText writes the coalesced text deltas, if any, as one record
// (end says the message may end here; the text is the model's, written
// exactly, so nothing is held back).
func (j *journal) flushText(end bool) error {
	text := j.text.String()
	j.text.Reset()
	if text == "" {
		return nil
	}
	return j.writeEvent("LlmTextDelta", fsm.LlmTextDelta{Request: j.textRequest, Text: text})
}

func (j *journal) writeEvent(tag string, ev fsm.Event) error {
	raw, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("journal: encode %s: %w", tag, err)
	}
	return j.writeLineMasked(journalRecord{Type: tag, Event: raw}, !modelWritten[tag])
}

// appendCommit records the start ("commit") or end ("commit-end") of an
// auto-commit.
func (j *journal) appendCommit(tag string, rec *commitRecord) error {
	return j.writeLine(journalRecord{Type: tag, Commit: rec})
}

// appendConfig records the configuration the next events are stepped
// under.
func (j *journal) appendConfig(cfg fsm.Config) error {
	if err := j.flushText(false); err != nil {
		return err
	}
	return j.writeLine(journalRecord{Type: "config", Config: &cfg})
}

// sync makes what was written durable.
func (j *journal) sync() error {
	if err := j.flushText(true); err != nil {
		return err
	}
	if !j.dirty {
		return nil
	}
	j.dirty = false
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal: sync %s: %w", j.path, err)
	}
	return nil
}

func (j *journal) close() error {
	err := j.sync()
	if cerr := j.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("journal: %w", cerr)
	}
	return err
}

// asideName is where a journal is moved to when it is set aside: path with
// the reason and a timestamp before its extension.
func asideName(path, reason string, now time.Time) string {
	base := strings.TrimSuffix(path, ".jsonl")
	return fmt.Sprintf("%s.%s-%s.jsonl", base, reason, now.UTC().Format("20060102T150405.000000000"))
}

// errIncompatible marks a journal this version cannot read.
var errIncompatible = errors.New("incompatible journal")

// journalStep is one record of a journal being read.
type journalStep struct {
	line   int
	config *fsm.Config // a config record
	// commit is a "commit" record (an auto-commit started); commitEnd is
	// set for "commit-end".
	commit    *commitRecord
	commitEnd bool
	// restore is a "restore" record (a revert's restores planned);
	// restoreEnd is set for "restore-end".
	restore    *restoreRecord
	restoreEnd bool
	event      fsm.Event // else an event
}

// journalScan is what reading a journal found besides its records.
type journalScan struct {
	header journalHeader
	// good is the size of the journal up to its last complete line.
	good int64
	// torn is set when the last line is incomplete; it is skipped.
	torn bool
	// bad lists the lines that could not be decoded; they are skipped.
	bad []string
}

// scanJournal reads a journal and calls fn for each record in order. It
// returns an error wrapping errIncompatible when the header is missing or
// of another version.
func scanJournal(r io.Reader, fn func(journalStep)) (journalScan, error) {
	return scanJournalUnsealed(r, nil, fn)
}

// scanJournalUnsealed is scanJournal giving back, with unseal, the
// secrets sealed in what the model wrote (journal.writeEvent); nil
// leaves the marks.
func scanJournalUnsealed(r io.Reader, unseal *secret.Redactor, fn func(journalStep)) (journalScan, error) {
	var sc journalScan
	br := bufio.NewReaderSize(r, 64<<10)
	var off int64
	var long []byte // a line longer than br's buffer, assembled
	for line := 1; ; line++ {
		// The line is read in place when it fits the buffer: every record
		// is decoded (copied) before the next read.
		b, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], b...)
			for err == bufio.ErrBufferFull {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		if len(b) == 0 && err == io.EOF {
			return sc, nil
		}
		if err != nil && err != io.EOF {
			return sc, fmt.Errorf("journal: read: %w", err)
		}
		if b[len(b)-1] != '\n' {
			// Written by a daemon killed mid-write: skip it.
			sc.torn = true
			return sc, nil
		}
		off += int64(len(b))
		b = bytes.TrimSpace(b)
		if line == 1 {
			if err := json.Unmarshal(b, &sc.header); err != nil || sc.header.Journal != journalMagic {
				return sc, fmt.Errorf("%w: no journal header", errIncompatible)
			}
			if sc.header.Version != journalVersion {
				return sc, fmt.Errorf("%w: version %d, this loom-lsp reads version %d", errIncompatible, sc.header.Version, journalVersion)
			}
			sc.good = off
			continue
		}
		sc.good = off
		if len(b) == 0 {
			continue
		}
		var rec journalRecord
		if tag, raw, ok := splitEventRecord(b); ok {
			rec = journalRecord{Type: tag, Event: raw}
		} else if err := json.Unmarshal(b, &rec); err != nil {
			sc.bad = append(sc.bad, fmt.Sprintf("line %d: %v", line, err))
			continue
		}
		if rec.Type == "config" {
			if rec.Config == nil {
				sc.bad = append(sc.bad, fmt.Sprintf("line %d: config record without config", line))
				continue
			}
			fn(journalStep{line: line, config: rec.Config})
			continue
		}
		if rec.Type == "commit" || rec.Type == "commit-end" {
			fn(journalStep{line: line, commit: rec.Commit, commitEnd: rec.Type == "commit-end"})
			continue
		}
		if rec.Type == "restore" || rec.Type == "restore-end" {
			fn(journalStep{line: line, restore: rec.Restore, restoreEnd: rec.Type == "restore-end"})
			continue
		}
		if unseal != nil && modelWritten[rec.Type] {
			rec.Event = json.RawMessage(unseal.Unseal(string(rec.Event)))
		}
		ev, err := decodeEvent(rec.Type, rec.Event)
		if err != nil {
			sc.bad = append(sc.bad, fmt.Sprintf("line %d: %v", line, err))
			continue
		}
		fn(journalStep{line: line, event: ev})
	}
}

// splitEventRecord reads an event record in the exact form appendEvent
// writes, {"t":"Tag","e":{…}}, without a first JSON pass over the whole
// line (its event is decoded once, by decodeEvent, which checks it). ok is
// false for any other form, which is then decoded in full.
func splitEventRecord(b []byte) (tag string, raw json.RawMessage, ok bool) {
	const head, mid = `{"t":"`, `","e":`
	if !bytes.HasPrefix(b, []byte(head)) || !bytes.HasSuffix(b, []byte("}")) {
		return "", nil, false
	}
	rest := b[len(head):]
	end := bytes.IndexByte(rest, '"')
	if end <= 0 || !bytes.HasPrefix(rest[end:], []byte(mid)) {
		return "", nil, false
	}
	for _, c := range rest[:end] {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return "", nil, false
		}
	}
	return string(rest[:end]), rest[end+len(mid) : len(rest)-1], true
}

// replayed is a conversation restored from a journal.
type replayed struct {
	m     *fsm.Machine
	scan  journalScan
	steps int
	// rejected lists events the machine refused during the replay.
	rejected []string
	// pendingCommit is an auto-commit that started and never ended.
	pendingCommit *commitRecord
	// pendingRestore are a revert's restores planned and never ended.
	pendingRestore *restoreRecord
	// commits are the auto-commits the conversation made and did not
	// rewind, with their turns, for a rewind after a restart.
	commits commitLog
}

// replayJournal reads the journal at path and steps its events through a
// fresh machine, built from the journal's first configuration record (else
// from cfg), performing none of the actions. It returns errIncompatible
// for a journal it cannot read.
func replayJournal(path string, cfg fsm.Config) (replayed, error) {
	return replayJournalUnsealed(path, cfg, nil)
}

// replayJournalUnsealed is replayJournal giving back, with unseal, the
// secrets sealed in what the model wrote.
func replayJournalUnsealed(path string, cfg fsm.Config, unseal *secret.Redactor) (replayed, error) {
	f, err := os.Open(path)
	if err != nil {
		return replayed{}, err
	}
	defer f.Close()
	var rp replayed
	var pendingTurn uint64
	sc, err := scanJournalUnsealed(f, unseal, func(st journalStep) {
		if st.restore != nil || st.restoreEnd {
			rp.pendingRestore = st.restore
			if st.restoreEnd {
				rp.pendingRestore = nil
			}
			return
		}
		if st.commit != nil || st.commitEnd {
			if !st.commitEnd {
				rp.pendingCommit = st.commit
				if rp.m != nil {
					pendingTurn = rp.m.State().Turn
				}
				return
			}
			if st.commit != nil && st.commit.SHA != "" {
				rp.commits.made(rp.pendingCommit, st.commit.SHA, pendingTurn)
			}
			rp.pendingCommit = nil
			return
		}
		if st.config != nil {
			if rp.m == nil {
				rp.m = fsm.New(*st.config)
			} else {
				rp.m.Reconfigure(*st.config)
			}
			return
		}
		if rp.m == nil {
			rp.m = fsm.New(cfg)
		}
		if _, err := rp.m.Step(st.event); err != nil {
			rp.rejected = append(rp.rejected, fmt.Sprintf("line %d: %v", st.line, err))
			return
		}
		rp.commits.stepped(st.event)
		rp.steps++
	})
	rp.scan = sc
	if err != nil {
		return rp, err
	}
	if rp.m == nil {
		rp.m = fsm.New(cfg)
	}
	return rp, nil
}

// DescribeJournal replays the journal read from r through a fresh state
// machine and writes, for every step, the event, then the actions it
// produced and the machine's state, in fsm.Describe's canonical text. It is
// the `loom-lsp replay` debugging command.
func DescribeJournal(r io.Reader, w io.Writer) error {
	var m *fsm.Machine
	var steps bytes.Buffer
	bw := bufio.NewWriter(&steps)
	sc, err := scanJournal(r, func(st journalStep) {
		if st.config != nil {
			if m == nil {
				m = fsm.New(*st.config)
				fmt.Fprintf(bw, "%d: new machine (%d tools, max_iterations=%d, max_retries=%d)\n", st.line, len(st.config.Tools), st.config.MaxIterations, st.config.MaxRetries)
				fmt.Fprintf(bw, "  state: %s\n", m.State().Describe())
			} else {
				m.Reconfigure(*st.config)
				fmt.Fprintf(bw, "%d: reconfigured\n", st.line)
			}
			return
		}
		if st.commit != nil || st.commitEnd {
			fmt.Fprintf(bw, "%d: %s\n", st.line, describeCommit(st))
			return
		}
		if st.restore != nil || st.restoreEnd {
			fmt.Fprintf(bw, "%d: %s\n", st.line, describeRestore(st))
			return
		}
		if m == nil {
			m = fsm.New(fsm.Config{})
		}
		fmt.Fprintf(bw, "%d: %s\n", st.line, fsm.Describe(st.event))
		acts, err := m.Step(st.event)
		if err != nil {
			fmt.Fprintf(bw, "  error: %v\n", err)
		}
		for _, a := range acts {
			fmt.Fprintf(bw, "  %s\n", a.Describe())
		}
		fmt.Fprintf(bw, "  state: %s\n", m.State().Describe())
	})
	bw.Flush()
	out := bufio.NewWriter(w)
	if sc.header.Journal != "" {
		fmt.Fprintf(out, "journal of %s, version %d, created %s\n", sc.header.Folder, sc.header.Version, sc.header.Created.Format(time.RFC3339))
	}
	out.Write(steps.Bytes())
	bw = out
	for _, b := range sc.bad {
		fmt.Fprintf(bw, "skipped %s\n", b)
	}
	if sc.torn {
		fmt.Fprintf(bw, "skipped a torn last line\n")
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

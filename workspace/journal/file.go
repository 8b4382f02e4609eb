package journal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/secret"
)

// journal appends records to a session's journal file. It is owned by the
// session's goroutine.
type File struct {
	path   string
	folder string
	f      *os.File
	dirty  bool   // written since the last sync
	id     string // the conversation's id (see Header)
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

// SetRedactor makes j mask what r masks.
func (j *File) SetRedactor(r *secret.Redactor) {
	j.redactor = r
}

// modelWritten are the events that hold what the model wrote (its text,
// reasoning, tool calls and the data its server requires echoed back):
// journaled exactly.
var modelWritten = map[string]bool{"LlmTextDelta": true, "LlmReasoningDelta": true, "LlmCompleted": true, "LlmToolCallDelta": true}

// Create starts a new journal at path, with its header.
func Create(path, folder string, now time.Time) (*File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &File{path: path, folder: folder, f: f, id: ID(folder, now)}
	if err := j.WriteLine(Header{Journal: Magic, Version: Version, Folder: folder, Created: now.UTC()}); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// Append opens an existing, already validated journal for
// appending, cutting it at size (dropping a torn last line).
func Append(path, folder string, size int64, id string) (*File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: %w", err)
	}
	return &File{path: path, folder: folder, f: f, id: id}, nil
}

func (j *File) WriteLine(v any) error { return j.writeLineMasked(v, true) }

// writeLineMasked writes v as one line, masked when mask is set.
func (j *File) writeLineMasked(v any, mask bool) error {
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

// AppendEvent records an event the machine accepted. Text deltas are
// coalesced until the next other event.
func (j *File) AppendEvent(ev fsm.Event) error {
	tag := Tag(ev)
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
func (j *File) textPending() bool {
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
func (j *File) flushText(end bool) error {
	text := j.text.String()
	j.text.Reset()
	if text == "" {
		return nil
	}
	return j.writeEvent("LlmTextDelta", fsm.LlmTextDelta{Request: j.textRequest, Text: text})
}

func (j *File) writeEvent(tag string, ev fsm.Event) error {
	raw, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("journal: encode %s: %w", tag, err)
	}
	return j.writeLineMasked(Record{Type: tag, Event: raw}, !modelWritten[tag])
}

// AppendCommit records the start ("commit") or end ("commit-end") of an
// auto-commit.
func (j *File) AppendCommit(tag string, rec *CommitRecord) error {
	return j.WriteLine(Record{Type: tag, Commit: rec})
}

// AppendConfig records the configuration the next events are stepped
// under.
func (j *File) AppendConfig(cfg fsm.Config) error {
	if err := j.flushText(false); err != nil {
		return err
	}
	return j.WriteLine(Record{Type: "config", Config: &cfg})
}

// sync makes what was written durable.
func (j *File) Sync() error {
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

func (j *File) Close() error {
	err := j.Sync()
	if cerr := j.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("journal: %w", cerr)
	}
	return err
}

// AsideName is where a journal is moved to when it is set aside: path with
// the reason and a timestamp before its extension.
func AsideName(path, reason string, now time.Time) string {
	base := strings.TrimSuffix(path, ".jsonl")
	return fmt.Sprintf("%s.%s-%s.jsonl", base, reason, now.UTC().Format("20060102T150405.000000000"))
}

// ID is the id of the conversation j journals (see ID).
func (j *File) ID() string { return j.id }

// Abandon closes j without writing what it holds: after a failed write.
func (j *File) Abandon() { j.f.Close() }

// ModelWritten reports whether records of type tag hold what the model
// wrote, journaled exactly (keys sealed, nothing else masked).
func ModelWritten(tag string) bool { return modelWritten[tag] }

package workspace

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/secret"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// convJournal is a conversation's journal: the file it appends the
// events its machine accepted to, the lock it holds on it, and what the
// conversation lists read of it (the meta file: its title and turn
// count). It is owned by the conversation's goroutine, like the machine.
// It knows the folder only by its directory, and reaches the user only
// through notify.
type convJournal struct {
	// file records every accepted event; nil when not journaling.
	file *journal.File
	// lock holds the journal's lock while this conversation owns it.
	lock *journal.Held
	// turns counts the conversation's prompts, and title is its title
	// (the first prompt's first line, or the one set, named): both are
	// kept in the journal's meta file for the conversation lists.
	turns int
	title string
	named bool

	dir      string
	log      *slog.Logger
	redactor *secret.Redactor
	notify   func(Notification)
	// path is the journal's path, "" when not journaled; usage the
	// machine's token usage, for the meta file.
	path  func() string
	usage func() fsm.Usage
}

// write runs one write; a failure is reported once and ends the
// journaling of this conversation, rather than failing every step.
func (j *convJournal) write(write func(*journal.File) error) {
	if j.file == nil {
		return
	}
	if err := write(j.file); err != nil {
		j.notify(Notification{Kind: NoteError, Text: err.Error() + "; the conversation is no longer journaled"})
		j.file.Abandon()
		j.file = nil
	}
}

// record writes one record (a change verb's).
func (j *convJournal) record(rec journal.Record) {
	j.write(func(f *journal.File) error { return f.WriteLine(rec) })
}

// config records a new machine configuration.
func (j *convJournal) config(cfg fsm.Config) {
	j.write(func(f *journal.File) error { return f.AppendConfig(cfg) })
}

// event records an event the machine accepted; a conversation's first
// prompt titles it.
func (j *convJournal) event(ev fsm.Event) {
	if _, ok := ev.(fsm.Reset); ok {
		// A reset ends this journal's conversation (ConversationReset
		// sets the journal aside and starts a new one): the journal set
		// aside keeps the conversation as it was, so that loading it
		// later replays it rather than its emptying.
		return
	}
	j.write(func(f *journal.File) error { return f.AppendEvent(ev) })
	if in, ok := ev.(fsm.UserInput); ok {
		j.turns++
		if j.title == "" {
			j.title = journal.Title(j.redactor, in.Text)
			j.writeMeta()
			j.notify(Notification{Kind: NoteTitle, Text: j.title})
		}
	}
}

// start starts a new journal at path, created at created, whose first
// line is cfg; it returns the conversation's id and the journal's path
// ("" when it could not: the conversation is not journaled).
func (j *convJournal) start(path string, created time.Time, cfg fsm.Config) (id, at string) {
	j.turns, j.title, j.named = 0, "", false
	os.Remove(journal.MetaPath(path)) // a meta file left by a journal set aside
	f, err := journal.Create(path, j.dir, created)
	if err != nil {
		j.notify(Notification{Kind: NoteError, Text: err.Error() + "; this conversation is not journaled"})
		return journal.UnjournaledID(), ""
	}
	f.SetRedactor(j.redactor)
	j.file = f
	j.config(cfg)
	return f.ID(), path
}

// restart sets the journal at path aside (kept, renamed with a
// timestamp), prunes the past ones by keep and maxAge and starts a new
// one with cfg (loom.reset); it returns the new id and path.
func (j *convJournal) restart(path string, cfg fsm.Config, keep int, maxAge time.Duration) (id, at string) {
	if path == "" || j.lock == nil {
		j.turns, j.title, j.named = 0, "", false
		return journal.UnjournaledID(), "" // not journaling (no state directory)
	}
	if j.file != nil {
		if err := j.file.Close(); err != nil {
			j.log.Warn("closing the journal", "err", err)
		}
		j.file = nil
		j.setAside(path)
		j.prune(path, keep, maxAge)
	}
	return j.start(path, time.Now(), cfg)
}

// prune applies the retention ([journal] keep and max_age) to the past
// conversations of the folder whose live journal is at live.
func (j *convJournal) prune(live string, keep int, maxAge time.Duration) {
	for _, p := range pruneJournals(live, keep, maxAge, time.Now()) {
		j.log.Info("old journal pruned", "path", p)
	}
}

// setAside keeps the journal at path under a timestamped name, for the
// retention to prune (see docs, "Conversation journals"), so that a new
// conversation can start at path. A missing journal is not an error.
func (j *convJournal) setAside(path string) {
	aside := journal.AsideName(path, "reset", time.Now())
	if err := os.Rename(path, aside); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			j.log.Error("cannot set the journal aside", "err", err)
		}
		return
	}
	os.Rename(journal.MetaPath(path), journal.MetaPath(aside))
	j.log.Info("journal kept", "path", aside)
}

// sync makes the journal durable (at turn boundaries), and its meta file
// current.
func (j *convJournal) sync() {
	if j.file == nil {
		return
	}
	j.writeMeta()
	if err := j.file.Sync(); err != nil {
		j.log.Warn("journal sync failed", "err", err)
	}
}

// close flushes and closes the journal and releases its lock.
func (j *convJournal) close() {
	if j.file != nil {
		if err := j.file.Close(); err != nil {
			j.log.Warn("closing the journal", "err", err)
		}
		j.file = nil
	}
	if j.lock != nil {
		j.lock.Release()
		j.lock = nil
	}
}

// writeMeta writes the journal's meta file.
func (j *convJournal) writeMeta() {
	path := j.path()
	if path == "" || j.file == nil {
		return
	}
	m := journal.Meta{Title: j.redactor.String(j.title), Named: j.named, Turns: j.turns, Updated: time.Now()}
	m.Usage = j.usage()
	if err := journal.WriteMeta(path, m); err != nil {
		j.log.Warn("conversation meta file", "err", err)
	}
}

// readMeta restores the title and turn count of the journal at path.
func (j *convJournal) readMeta(path string) {
	c, err := readConversation(path, j.redactor)
	if err != nil {
		return
	}
	j.title, j.turns = c.Title, c.Turns
	if b, err := os.ReadFile(journal.MetaPath(path)); err == nil {
		var m journal.Meta
		if json.Unmarshal(b, &m) == nil {
			j.named = m.Named
		}
	}
}

// rename sets the title ("" goes back to the first prompt's, read from
// the journal at path) and says so.
func (j *convJournal) rename(title, path string) {
	j.named = title != ""
	if j.named {
		j.title = title
	} else {
		j.title = ""
		if path != "" {
			if c, err := journal.ReadInfo(path, false, j.redactor); err == nil {
				j.title = c.Title
			}
		}
	}
	j.writeMeta()
	j.notify(Notification{Kind: NoteTitle, Text: j.title})
}

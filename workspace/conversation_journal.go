package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// opening says where a conversation starts from: a journal whose lock it
// is handed, to resume or to start, or nothing (not journaled).
type opening struct {
	// id is the conversation's id.
	id string
	// path is the journal, "" when the conversation is not journaled;
	// lock is held on it.
	path string
	lock *journal.Held
	// fresh starts a new journal at path, created at created, after
	// setting aside the journal there when setAside (a new conversation
	// asked for by HostOptions.NewConversation).
	fresh    bool
	setAside bool
	created  time.Time
	// notice says why the conversation is not journaled.
	notice string
}

// journalFile returns where the folder's first journal lives, "" when
// there is no usable state directory.
func (f *Folder) journalFile() string {
	dir, err := f.host.stateDir()
	if err != nil {
		f.log.Warn("no journal", "err", err)
		return ""
	}
	return journal.Path(dir, f.dir)
}

// open builds the conversation's machine from o: the conversation
// replayed from its journal, or a new one. A replay that ends mid-turn
// (the daemon was killed) is cancelled, so that the conversation is valid
// and waits for input. Problems are reported, never fatal: at worst the
// conversation starts anew without a journal.
func (s *Conversation) open(o opening) {
	cfg := s.machineConfig()
	if o.path == "" || o.lock == nil {
		s.setID(o.id, "")
		if o.notice != "" {
			s.notify(Notification{Kind: NoteInfo, Text: o.notice})
		}
		s.m = fsm.New(cfg)
		return
	}
	s.journalLock = o.lock
	defer s.pruneJournals(o.path)
	if o.fresh {
		if o.setAside {
			s.setJournalAside(o.path)
		}
		s.m = fsm.New(cfg)
		s.startJournal(o.path, o.created)
		return
	}
	s.restore(o.path)
}

// restore builds the conversation's machine from the journal at path,
// whose lock it holds, and journals on into it.
func (s *Conversation) restore(path string) {
	cfg := s.machineConfig()
	rp, err := journal.ReplayUnsealed(path, cfg, s.folder.host.redactor)
	switch {
	case errors.Is(err, os.ErrNotExist):
		s.m = fsm.New(cfg)
		s.startJournal(path, time.Now())
		return
	case errors.Is(err, journal.ErrIncompatible):
		aside := journal.AsideName(path, "incompatible", time.Now())
		if rerr := os.Rename(path, aside); rerr != nil {
			s.notify(Notification{Kind: NoteError, Text: fmt.Sprintf("the conversation journal %s cannot be read (%v) nor set aside (%v): this conversation is not journaled", path, err, rerr)})
			s.m = fsm.New(cfg)
			s.setID(journal.UnjournaledID(), "")
			return
		}
		s.notify(Notification{Kind: NoteError, Text: fmt.Sprintf("the conversation journal could not be read (%v); it was kept as %s and a new conversation started", err, aside)})
		s.m = fsm.New(cfg)
		s.startJournal(path, time.Now())
		return
	case err != nil:
		s.notify(Notification{Kind: NoteError, Text: "the conversation journal could not be read: " + err.Error() + "; this conversation is not journaled"})
		s.m = fsm.New(cfg)
		s.setID(journal.UnjournaledID(), "")
		return
	}
	s.m = rp.M
	s.m.Reconfigure(cfg)
	id := journal.ID(rp.Scan.Header.Folder, rp.Scan.Header.Created)
	s.setID(id, path)
	s.readMeta(path)
	j, err := journal.Append(path, s.folder.dir, rp.Scan.Good, id)
	if err != nil {
		s.notify(Notification{Kind: NoteError, Text: err.Error() + "; this conversation is not journaled"})
	} else {
		j.SetRedactor(s.folder.host.redactor)
		s.journal = j
		s.writeJournal(func(j *journal.File) error { return j.AppendConfig(cfg) })
	}
	if rp.Scan.Torn {
		s.notify(Notification{Kind: NoteInfo, Text: "the journal's last line was cut short (the daemon was stopped while writing it); it was skipped"})
	}
	if n := len(rp.Scan.Bad) + len(rp.Rejected); n > 0 {
		all := append(append([]string(nil), rp.Scan.Bad...), rp.Rejected...)
		s.notify(Notification{Kind: NoteError, Text: fmt.Sprintf("%d journal line(s) could not be journal.Replayed and were skipped: %s", n, strings.Join(all, "; "))})
	}
	st := s.m.State()
	s.startedTurn = st.Turn
	if rp.Steps > 0 {
		s.notify(Notification{Kind: NoteInfo, Turn: st.Turn, Text: fmt.Sprintf("resumed the conversation: %s, %s", plural(st.Messages, "message"), plural(int(st.Turn), "turn"))})
	}
	s.announcePlan()
	s.changes.ReportPendingCommit(rp.PendingCommit)
	left := s.changes.FinishRestore(rp.PendingRestore)
	// The conversation's auto-commits, for a rewind after the restart.
	s.changes.Log.Set(rp.Commits.Commits, rp.Commits.TurnOf)
	s.changes.FinishRewind(rp.PendingRewind, left)
	if s.busy() && !s.resumeReviews(path) {
		// The daemon died mid-turn: close the turn like a cancel, which
		// gives unanswered tool calls a result (unless it only waited
		// for the user's review: review.go).
		s.step(fsm.Cancel{})
	}
	s.review.Tidy() // none waits: a file left beside the journal goes
	s.syncJournal()
}

// startJournal starts a new journal at path, created at created, for the
// current machine.
func (s *Conversation) startJournal(path string, created time.Time) {
	s.turns, s.title, s.named = 0, "", false
	os.Remove(journal.MetaPath(path)) // a meta file left by a journal set aside
	j, err := journal.Create(path, s.folder.dir, created)
	if err != nil {
		s.notify(Notification{Kind: NoteError, Text: err.Error() + "; this conversation is not journaled"})
		s.setID(journal.UnjournaledID(), "")
		return
	}
	j.SetRedactor(s.folder.host.redactor)
	s.journal = j
	s.setID(j.ID(), path)
	cfg := s.machineConfig()
	if s.m != nil {
		// A new conversation of this Conversation (after a reset) goes
		// on with its ids.
		cfg.ContinueFrom = s.m.IDs()
	}
	s.writeJournal(func(j *journal.File) error { return j.AppendConfig(cfg) })
}

// restartJournal sets the current journal aside (kept, renamed with a
// timestamp) and starts a new one: loom.reset.
func (s *Conversation) restartJournal() {
	path := s.journalPathShared()
	if path == "" || s.journalLock == nil {
		s.turns, s.title, s.named = 0, "", false
		s.setID(journal.UnjournaledID(), "")
		return // not journaling (no state directory)
	}
	if s.journal != nil {
		if err := s.journal.Close(); err != nil {
			s.folder.log.Warn("closing the journal", "err", err)
		}
		s.journal = nil
		s.setJournalAside(path)
		s.pruneJournals(path)
	}
	s.startJournal(path, time.Now())
}

// pruneJournals applies the retention ([journal] keep and max_age) to the
// past conversations of the folder whose live journal is at live.
func (s *Conversation) pruneJournals(live string) {
	for _, p := range pruneJournals(live, s.cfg.Journal.Keep, s.cfg.Journal.MaxAge.Duration, time.Now()) {
		s.folder.log.Info("old journal pruned", "path", p)
	}
}

// pruneJournals deletes the past conversations of the folder whose live
// journal is at live (the journals set aside next to it, live.*.jsonl)
// beyond the retention: all but the keep most recently written, and any
// not written to for maxAge (when maxAge > 0). The live journal is never
// touched. It returns the paths it deleted.
func pruneJournals(live string, keep int, maxAge time.Duration, now time.Time) []string {
	paths, err := filepath.Glob(strings.TrimSuffix(live, ".jsonl") + ".*.jsonl")
	if err != nil {
		return nil
	}
	type past struct {
		path string
		mod  time.Time
	}
	var all []past
	for _, p := range paths {
		if journal.Locked(p) {
			continue // open, here or in another process
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			all = append(all, past{p, st.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod.After(all[j].mod) })
	var removed []string
	for i, p := range all {
		if i >= keep || (maxAge > 0 && now.Sub(p.mod) > maxAge) {
			if os.Remove(p.path) == nil {
				os.Remove(journal.MetaPath(p.path))
				os.Remove(p.path + ".lock")
				removed = append(removed, p.path)
			}
		}
	}
	return removed
}

// setJournalAside keeps the journal at path under a timestamped name, for
// the retention to prune (see README.md, "Conversation journals"), so that a new conversation
// can start at path. A missing journal is not an error.
func (s *Conversation) setJournalAside(path string) {
	aside := journal.AsideName(path, "reset", time.Now())
	if err := os.Rename(path, aside); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.folder.log.Error("cannot set the journal aside", "err", err)
		}
		return
	}
	os.Rename(journal.MetaPath(path), journal.MetaPath(aside))
	s.folder.log.Info("journal kept", "path", aside)
}

// journalEvent records an event the machine accepted.
func (s *Conversation) journalEvent(ev fsm.Event) {
	if _, ok := ev.(fsm.Reset); ok {
		// A reset ends this journal's conversation (ConversationReset
		// sets the journal aside and starts a new one): the journal set
		// aside keeps the conversation as it was, so that loading it
		// later replays it rather than its emptying.
		return
	}
	s.writeJournal(func(j *journal.File) error { return j.AppendEvent(ev) })
	if in, ok := ev.(fsm.UserInput); ok {
		s.turns++
		if s.title == "" {
			s.title = journal.Title(s.folder.host.redactor, in.Text)
			s.writeMeta()
			s.notify(Notification{Kind: NoteTitle, Text: s.title})
		}
	}
}

// journalConfig records a new machine configuration.
func (s *Conversation) journalConfig() {
	s.writeJournal(func(j *journal.File) error { return j.AppendConfig(s.machineConfig()) })
}

// writeJournal runs one write; a failure is reported once and ends the
// journaling of this session, rather than failing every step.
func (s *Conversation) writeJournal(write func(*journal.File) error) {
	if s.journal == nil {
		return
	}
	if err := write(s.journal); err != nil {
		s.notify(Notification{Kind: NoteError, Text: err.Error() + "; the conversation is no longer journaled"})
		s.journal.Abandon()
		s.journal = nil
	}
}

// syncJournal makes the journal durable (at turn boundaries), and its
// meta file current.
func (s *Conversation) syncJournal() {
	if s.journal == nil {
		return
	}
	s.writeMeta()
	if err := s.journal.Sync(); err != nil {
		s.folder.log.Warn("journal sync failed", "err", err)
	}
}

// closeJournal flushes and closes the journal when the session stops, and
// releases its lock.
func (s *Conversation) closeJournal() {
	if s.journal != nil {
		if err := s.journal.Close(); err != nil {
			s.folder.log.Warn("closing the journal", "err", err)
		}
		s.journal = nil
	}
	if s.journalLock != nil {
		s.journalLock.Release()
		s.journalLock = nil
	}
}

// plural is "1 turn", "2 turns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

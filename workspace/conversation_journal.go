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
)

// journalFile returns where the session's journal lives, "" when there is
// no usable state directory.
func (s *Conversation) journalFile() string {
	dir := s.host.opts.StateDir
	if dir == "" {
		d, err := defaultStateDir()
		if err != nil {
			s.log.Warn("no journal", "err", err)
			return ""
		}
		dir = d
	}
	return journalPath(dir, s.folder)
}

// resume builds the session's machine: the conversation replayed from the
// journal when there is one, else a new one. A replay that ends mid-turn
// (the daemon was killed) is cancelled, so that the conversation is valid
// and the session waits for input. Problems are reported, never fatal: at
// worst the session starts a new conversation without a journal.
//
// With HostOptions.NewConversation, an existing journal is set aside (as a
// reset does) instead of being resumed.
func (s *Conversation) resume() {
	cfg := s.machineConfig()
	s.conversationID = unjournaledConversationID() // replaced by the journal's
	path := s.journalFile()
	if path == "" {
		s.m = fsm.New(cfg)
		return
	}
	lock, err := lockJournal(path)
	if err != nil {
		s.notify(Notification{Kind: NoteInfo, Text: err.Error() + ": this session starts a new conversation and does not journal it"})
		s.m = fsm.New(cfg)
		return
	}
	s.journalLock = lock
	defer s.pruneJournals(path)
	if s.host.opts.NewConversation {
		s.setJournalAside(path)
		s.m = fsm.New(cfg)
		s.startJournal(path)
		return
	}
	s.restore(path)
}

// restore builds the session's machine from the journal at path, whose
// lock the session holds, and journals on into it.
func (s *Conversation) restore(path string) {
	cfg := s.machineConfig()
	rp, err := replayJournal(path, cfg)
	switch {
	case errors.Is(err, os.ErrNotExist):
		s.m = fsm.New(cfg)
		s.startJournal(path)
		return
	case errors.Is(err, errIncompatible):
		aside := asideName(path, "incompatible", time.Now())
		if rerr := os.Rename(path, aside); rerr != nil {
			s.notify(Notification{Kind: NoteError, Text: fmt.Sprintf("the conversation journal %s cannot be read (%v) nor set aside (%v): this session is not journaled", path, err, rerr)})
			s.m = fsm.New(cfg)
			return
		}
		s.notify(Notification{Kind: NoteError, Text: fmt.Sprintf("the conversation journal could not be read (%v); it was kept as %s and a new conversation started", err, aside)})
		s.m = fsm.New(cfg)
		s.startJournal(path)
		return
	case err != nil:
		s.notify(Notification{Kind: NoteError, Text: "the conversation journal could not be read: " + err.Error() + "; this session is not journaled"})
		s.m = fsm.New(cfg)
		return
	}
	s.m = rp.m
	s.m.Reconfigure(cfg)
	s.conversationID = conversationID(rp.scan.header.Folder, rp.scan.header.Created)
	j, err := appendJournal(path, s.folder, rp.scan.good, s.conversationID)
	if err != nil {
		s.notify(Notification{Kind: NoteError, Text: err.Error() + "; this session is not journaled"})
	} else {
		j.setRedactor(s.host.redactor)
		s.journal = j
		s.writeJournal(func(j *journal) error { return j.appendConfig(cfg) })
	}
	if rp.scan.torn {
		s.notify(Notification{Kind: NoteInfo, Text: "the journal's last line was cut short (the daemon was stopped while writing it); it was skipped"})
	}
	if n := len(rp.scan.bad) + len(rp.rejected); n > 0 {
		all := append(append([]string(nil), rp.scan.bad...), rp.rejected...)
		s.notify(Notification{Kind: NoteError, Text: fmt.Sprintf("%d journal line(s) could not be replayed and were skipped: %s", n, strings.Join(all, "; "))})
	}
	st := s.m.State()
	s.startedTurn = st.Turn
	if rp.steps > 0 {
		s.notify(Notification{Kind: NoteInfo, Turn: st.Turn, Text: fmt.Sprintf("resumed the conversation: %s, %s", plural(st.Messages, "message"), plural(int(st.Turn), "turn"))})
	}
	s.reportPendingCommit(rp.pendingCommit)
	if s.busy() {
		// The daemon died mid-turn: close the turn like a cancel, which
		// gives unanswered tool calls a result.
		s.step(fsm.Cancel{})
	}
	s.syncJournal()
}

// startJournal starts a new journal at path for the current machine.
func (s *Conversation) startJournal(path string) {
	j, err := createJournal(path, s.folder, time.Now())
	if err != nil {
		s.notify(Notification{Kind: NoteError, Text: err.Error() + "; this session is not journaled"})
		return
	}
	j.setRedactor(s.host.redactor)
	s.journal = j
	s.conversationID = j.id
	cfg := s.machineConfig()
	if s.m != nil {
		// A new conversation of this session (after a reset) goes on
		// with its ids.
		cfg.ContinueFrom = s.m.IDs()
	}
	s.writeJournal(func(j *journal) error { return j.appendConfig(cfg) })
}

// restartJournal sets the current journal aside (kept, renamed with a
// timestamp) and starts a new one: loom.reset.
func (s *Conversation) restartJournal() {
	path := s.journalFile()
	if path == "" || s.journalLock == nil {
		return // not journaling (no state directory, or another process has it)
	}
	if s.journal != nil {
		if err := s.journal.close(); err != nil {
			s.log.Warn("closing the journal", "err", err)
		}
		s.journal = nil
		s.setJournalAside(path)
		s.pruneJournals(path)
	}
	s.startJournal(path)
}

// pruneJournals applies the retention ([journal] keep and max_age) to the
// past conversations of the folder whose live journal is at live.
func (s *Conversation) pruneJournals(live string) {
	for _, p := range pruneJournals(live, s.cfg.Journal.Keep, s.cfg.Journal.MaxAge.Duration, time.Now()) {
		s.log.Info("old journal pruned", "path", p)
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
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			all = append(all, past{p, st.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod.After(all[j].mod) })
	var removed []string
	for i, p := range all {
		if i >= keep || (maxAge > 0 && now.Sub(p.mod) > maxAge) {
			if os.Remove(p.path) == nil {
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
	aside := asideName(path, "reset", time.Now())
	if err := os.Rename(path, aside); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.log.Error("cannot set the journal aside", "err", err)
		}
		return
	}
	s.log.Info("journal kept", "path", aside)
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
	s.writeJournal(func(j *journal) error { return j.appendEvent(ev) })
}

// journalConfig records a new machine configuration.
func (s *Conversation) journalConfig() {
	s.writeJournal(func(j *journal) error { return j.appendConfig(s.machineConfig()) })
}

// writeJournal runs one write; a failure is reported once and ends the
// journaling of this session, rather than failing every step.
func (s *Conversation) writeJournal(write func(*journal) error) {
	if s.journal == nil {
		return
	}
	if err := write(s.journal); err != nil {
		s.notify(Notification{Kind: NoteError, Text: err.Error() + "; the conversation is no longer journaled"})
		s.journal.f.Close()
		s.journal = nil
	}
}

// syncJournal makes the journal durable (at turn boundaries).
func (s *Conversation) syncJournal() {
	if s.journal == nil {
		return
	}
	if err := s.journal.sync(); err != nil {
		s.log.Warn("journal sync failed", "err", err)
	}
}

// closeJournal flushes and closes the journal when the session stops, and
// releases its lock.
func (s *Conversation) closeJournal() {
	if s.journal != nil {
		if err := s.journal.close(); err != nil {
			s.log.Warn("closing the journal", "err", err)
		}
		s.journal = nil
	}
	if s.journalLock != nil {
		s.journalLock.release()
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

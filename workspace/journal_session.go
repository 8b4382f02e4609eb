package workspace

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// journalFile returns where the session's journal lives, "" when there is
// no usable state directory.
func (s *Session) journalFile() string {
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
func (s *Session) resume() {
	cfg := s.machineConfig()
	path := s.journalFile()
	if path == "" {
		s.m = fsm.New(cfg)
		return
	}
	lock, err := lockJournal(path)
	if err != nil {
		s.log.Warn("no journal", "err", err)
		s.notify(Notification{Kind: NoteInfo, Text: err.Error() + ": this session starts a new conversation and does not journal it"})
		s.m = fsm.New(cfg)
		return
	}
	s.journalLock = lock
	s.restore(path)
}

// restore builds the session's machine from the journal at path, whose
// lock the session holds, and journals on into it.
func (s *Session) restore(path string) {
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
			s.log.Error("cannot set the journal aside", "err", rerr)
			s.notify(Notification{Kind: NoteError, Text: fmt.Sprintf("the conversation journal %s cannot be read (%v) nor set aside (%v): this session is not journaled", path, err, rerr)})
			s.m = fsm.New(cfg)
			return
		}
		s.notify(Notification{Kind: NoteError, Text: fmt.Sprintf("the conversation journal could not be read (%v); it was kept as %s and a new conversation started", err, aside)})
		s.m = fsm.New(cfg)
		s.startJournal(path)
		return
	case err != nil:
		s.log.Error("cannot replay the journal", "err", err)
		s.notify(Notification{Kind: NoteError, Text: "the conversation journal could not be read: " + err.Error() + "; this session is not journaled"})
		s.m = fsm.New(cfg)
		return
	}
	s.m = rp.m
	s.m.Reconfigure(cfg)
	j, err := appendJournal(path, s.folder, rp.scan.good)
	if err != nil {
		s.log.Error("cannot append to the journal", "err", err)
		s.notify(Notification{Kind: NoteError, Text: err.Error() + "; this session is not journaled"})
	} else {
		s.journal = j
		s.writeJournal(func(j *journal) error { return j.appendConfig(cfg) })
	}
	if rp.scan.torn {
		s.notify(Notification{Kind: NoteInfo, Text: "the journal's last line was cut short (the daemon was stopped while writing it); it was skipped"})
	}
	if n := len(rp.scan.bad) + len(rp.rejected); n > 0 {
		all := append(append([]string(nil), rp.scan.bad...), rp.rejected...)
		s.log.Warn("journal lines skipped", "lines", all)
		s.notify(Notification{Kind: NoteError, Text: fmt.Sprintf("%d journal line(s) could not be replayed and were skipped: %s", n, strings.Join(all, "; "))})
	}
	st := s.m.State()
	s.startedTurn = st.Turn
	if rp.steps > 0 {
		s.notify(Notification{Kind: NoteInfo, Turn: st.Turn, Text: fmt.Sprintf("resumed the conversation: %d messages, %d turns", st.Messages, st.Turn)})
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
func (s *Session) startJournal(path string) {
	j, err := createJournal(path, s.folder, time.Now())
	if err != nil {
		s.log.Error("cannot start a journal", "err", err)
		s.notify(Notification{Kind: NoteError, Text: err.Error() + "; this session is not journaled"})
		return
	}
	s.journal = j
	s.writeJournal(func(j *journal) error { return j.appendConfig(s.machineConfig()) })
}

// restartJournal sets the current journal aside (kept, renamed with a
// timestamp) and starts a new one: loom.reset.
func (s *Session) restartJournal() {
	path := s.journalFile()
	if path == "" || s.journalLock == nil {
		return // not journaling (no state directory, or another process has it)
	}
	if s.journal != nil {
		if err := s.journal.close(); err != nil {
			s.log.Warn("closing the journal", "err", err)
		}
		s.journal = nil
		aside := asideName(path, "reset", time.Now())
		if err := os.Rename(path, aside); err != nil {
			s.log.Error("cannot set the journal aside", "err", err)
		} else {
			s.log.Info("journal kept", "path", aside)
		}
	}
	s.startJournal(path)
}

// journalEvent records an event the machine accepted.
func (s *Session) journalEvent(ev fsm.Event) {
	s.writeJournal(func(j *journal) error { return j.appendEvent(ev) })
}

// journalConfig records a new machine configuration.
func (s *Session) journalConfig() {
	s.writeJournal(func(j *journal) error { return j.appendConfig(s.machineConfig()) })
}

// writeJournal runs one write; a failure is reported once and ends the
// journaling of this session, rather than failing every step.
func (s *Session) writeJournal(write func(*journal) error) {
	if s.journal == nil {
		return
	}
	if err := write(s.journal); err != nil {
		s.log.Error("journal write failed", "err", err)
		s.notify(Notification{Kind: NoteError, Text: err.Error() + "; the conversation is no longer journaled"})
		s.journal.f.Close()
		s.journal = nil
	}
}

// syncJournal makes the journal durable (at turn boundaries).
func (s *Session) syncJournal() {
	if s.journal == nil {
		return
	}
	if err := s.journal.sync(); err != nil {
		s.log.Warn("journal sync failed", "err", err)
	}
}

// closeJournal flushes and closes the journal when the session stops, and
// releases its lock.
func (s *Session) closeJournal() {
	if s.journal != nil {
		if err := s.journal.close(); err != nil {
			s.log.Warn("closing the journal", "err", err)
		}
		s.journal = nil
	}
	if s.journalLock != nil {
		s.journalLock.Close()
		s.journalLock = nil
	}
}

package workspace

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
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

// journalFile returns where the first journal of the folder at folder
// lives in the state directory (stateDir), "" when there is no usable
// one (said to log).
func journalFile(stateDir func() (string, error), folder string, log *slog.Logger) string {
	dir, err := stateDir()
	if err != nil {
		log.Warn("no journal", "err", err)
		return ""
	}
	return journal.Path(dir, folder)
}

// open builds the conversation's machine from o: the conversation
// replayed from its journal, or a new one. A replay that ends mid-turn
// (the daemon was killed) is cancelled, so that the conversation is valid
// and waits for input. Problems are reported, never fatal: at worst the
// conversation starts anew without a journal.
func (s *Conversation) open(o opening) {
	cfg := s.machineConfig()
	if o.path == "" || o.lock == nil {
		s.ident.set(o.id, "")
		if o.notice != "" {
			s.out.notify(Notification{Kind: NoteInfo, Text: o.notice})
		}
		s.m = fsm.New(cfg)
		return
	}
	s.jr.lock = o.lock
	defer s.jr.prune(o.path, s.cfg.Journal.Keep, s.cfg.Journal.MaxAge.Duration)
	if o.fresh {
		if o.setAside {
			s.jr.setAside(o.path)
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
			s.out.notify(Notification{Kind: NoteError, Text: fmt.Sprintf("the conversation journal %s cannot be read (%v) nor set aside (%v): this conversation is not journaled", path, err, rerr)})
			s.m = fsm.New(cfg)
			s.ident.set(journal.UnjournaledID(), "")
			return
		}
		s.out.notify(Notification{Kind: NoteError, Text: fmt.Sprintf("the conversation journal could not be read (%v); it was kept as %s and a new conversation started", err, aside)})
		s.m = fsm.New(cfg)
		s.startJournal(path, time.Now())
		return
	case err != nil:
		s.out.notify(Notification{Kind: NoteError, Text: "the conversation journal could not be read: " + err.Error() + "; this conversation is not journaled"})
		s.m = fsm.New(cfg)
		s.ident.set(journal.UnjournaledID(), "")
		return
	}
	s.m = rp.M
	s.m.Reconfigure(cfg)
	s.children.log = rp.Children
	id := journal.ID(rp.Scan.Header.Folder, rp.Scan.Header.Created)
	s.ident.set(id, path)
	s.jr.readMeta(path)
	j, err := journal.Append(path, s.folder.dir, rp.Scan.Good, id)
	if err != nil {
		s.out.notify(Notification{Kind: NoteError, Text: err.Error() + "; this conversation is not journaled"})
	} else {
		j.SetRedactor(s.folder.host.redactor)
		s.jr.file = j
		s.jr.config(cfg)
	}
	if rp.Scan.Torn {
		s.out.notify(Notification{Kind: NoteInfo, Text: "the journal's last line was cut short (the daemon was stopped while writing it); it was skipped"})
	}
	if n := len(rp.Scan.Bad) + len(rp.Rejected); n > 0 {
		all := append(append([]string(nil), rp.Scan.Bad...), rp.Rejected...)
		s.out.notify(Notification{Kind: NoteError, Text: fmt.Sprintf("%d journal line(s) could not be journal.Replayed and were skipped: %s", n, strings.Join(all, "; "))})
	}
	st := s.m.State()
	s.startedTurn = st.Turn
	if rp.Steps > 0 {
		s.out.notify(Notification{Kind: NoteInfo, Turn: st.Turn, Text: fmt.Sprintf("resumed the conversation: %s, %s", plural(st.Messages, "message"), plural(int(st.Turn), "turn"))})
	}
	announcePlan(s.m, s.jr.title, s.out.notify)
	s.verbs.here(s.changes.ReportPendingCommit(rp.PendingCommit))
	scrub := s.cfg.Model.APIKeyEnv
	left, finished := s.changes.FinishRestore(rp.PendingRestore, scrub)
	s.verbs.here(finished)
	// The conversation's auto-commits, for a rewind after the restart.
	s.changes.Log.Set(rp.Commits.Commits, rp.Commits.TurnOf)
	if o, ok := s.changes.FinishRewind(rp.PendingRewind, left, scrub); ok {
		if err := s.verbs.here(o); err != nil {
			s.verbs.tell(changes.RewindLost(rp.PendingRewind.Rewind.Turn, err))
		}
	}
	if s.busy() && !s.resumeReviews(path) {
		// The daemon died mid-turn: close the turn like a cancel, which
		// gives unanswered tool calls a result (unless it only waited
		// for the user's review: review.go).
		s.step(fsm.Cancel{})
	}
	s.review.Tidy() // none waits: a file left beside the journal goes
	s.jr.sync()
}

// startJournal starts a new journal at path, created at created, for the
// current machine.
func (s *Conversation) startJournal(path string, created time.Time) {
	cfg := s.machineConfig()
	if s.m != nil {
		// A new conversation of this Conversation (after a reset) goes
		// on with its ids.
		cfg.ContinueFrom = s.m.IDs()
	}
	s.ident.set(s.jr.start(path, created, cfg))
	s.children.log = nil // a new conversation: no children yet
}

// restartJournal sets the current journal aside (kept, renamed with a
// timestamp) and starts a new one: loom.reset.
func (s *Conversation) restartJournal() {
	cfg := s.machineConfig()
	if s.m != nil {
		cfg.ContinueFrom = s.m.IDs()
	}
	s.ident.set(s.jr.restart(s.ident.journal(), cfg, s.cfg.Journal.Keep, s.cfg.Journal.MaxAge.Duration))
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

// plural is "1 turn", "2 turns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

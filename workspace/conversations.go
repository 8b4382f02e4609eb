package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/secret"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// ErrUnknownConversation is returned for an id that is none of the
// folder's journaled conversations.
var ErrUnknownConversation = errors.New("no such conversation")

// ConversationInfo describes one journaled conversation of a workspace
// folder.
type ConversationInfo = journal.Info

// ErrOpenElsewhere is returned for a conversation that another loom-lsp
// process has open: it can be listed, not opened, renamed or deleted.
var ErrOpenElsewhere = errors.New("the conversation is open in another loom process")

// stateDir is where the host keeps journals.
func (h *Host) stateDir() (string, error) {
	if h.opts.StateDir != "" {
		return h.opts.StateDir, nil
	}
	return journal.DefaultStateDir()
}

// Conversations lists the journaled conversations of folder (an absolute
// path), or of every folder when folder is "", most recently updated
// first. Journals that cannot be read are left out.
func (h *Host) Conversations(folder string) ([]ConversationInfo, error) {
	dir, err := h.stateDir()
	if err != nil {
		return nil, err
	}
	pattern := filepath.Join(dir, "*.jsonl")
	if folder != "" {
		if folder, err = canonicalFolder(folder); err != nil {
			return nil, err
		}
		base := strings.TrimSuffix(journal.Path(dir, folder), ".jsonl")
		pattern = base + "*.jsonl"
	}
	paths, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	open := h.openJournals()
	var out []ConversationInfo
	for _, p := range paths {
		c, err := readConversation(p, h.redactor)
		if err != nil || (folder != "" && c.Folder != folder) {
			continue
		}
		c.Live = open[p]
		c.Elsewhere = !c.Live && journal.Locked(p)
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, nil
}

// openJournals returns the journals of the conversations open in this
// host.
func (h *Host) openJournals() map[string]bool {
	h.mu.Lock()
	folders := h.sortedFolders()
	h.mu.Unlock()
	open := map[string]bool{}
	for _, f := range folders {
		for _, c := range f.Open() {
			if p := c.ident.journal(); p != "" {
				open[p] = true
			}
		}
	}
	return open
}

// readConversation reads a journal's header and its meta file, or, when
// there is none (a journal of an older loom-lsp), its prompts.
func readConversation(path string, r *secret.Redactor) (ConversationInfo, error) {
	return journal.ReadInfo(path, true, r)
}

// Conversation describes this conversation; its ID is "" when it is not
// journaled.
func (s *Conversation) Conversation(ctx context.Context) (ConversationInfo, error) {
	var c ConversationInfo
	callErr := s.loop.call(ctx, func() {
		c = ConversationInfo{ID: s.ident.own, Folder: s.folder.dir, Title: s.jr.title, Turns: s.jr.turns, Live: true}
		_, c.Usage = s.m.Usage()
		if path := s.ident.journal(); path != "" {
			c.Path = path
			if st, err := os.Stat(path); err == nil {
				c.Updated = st.ModTime()
			}
		} else {
			c.ID = ""
		}
	})
	return c, callErr
}

// Rename sets the conversation's title ("" goes back to its first
// prompt's).
func (s *Conversation) Rename(ctx context.Context, title string) error {
	title = journal.Title(s.folder.host.redactor, title)
	return s.loop.call(ctx, func() { s.jr.rename(title, s.ident.journal()) })
}

// LoadConversation makes this conversation the folder's journaled
// conversation id, in its place (fsm.Load): the prompts queued are
// dropped, the turn in flight is cancelled, the current journal stays
// (listed and loadable) and the conversation id is replayed from its
// journal. Loading this conversation does nothing. A conversation open
// elsewhere, in this process or another, is refused.
func (s *Conversation) LoadConversation(ctx context.Context, id string) error {
	if id == s.ID() {
		return nil
	}
	target, err := s.folder.find(id)
	if err != nil {
		return err
	}
	if target.Live {
		return fmt.Errorf("conversation %s is already open in this process", id)
	}
	lock, err := journal.Lock(target.Path)
	if errors.Is(err, journal.ErrBusy) {
		return fmt.Errorf("%w: %s", ErrOpenElsewhere, id)
	}
	if err != nil {
		return err
	}
	handed := false
	callErr := s.loop.call(ctx, func() {
		handed = true
		if _, err = s.step(fsm.Load{ID: id}); err != nil {
			lock.Release()
			return
		}
		s.loadInPlace(target.Path, lock)
	})
	if callErr != nil {
		if !handed {
			lock.Release()
		}
		return callErr
	}
	return err
}

// loadInPlace performs fsm.LoadConversation: the current journal is
// closed and its lock released, and the machine is replayed from the
// journal at path, whose lock is handed over. Ids never go back: the
// loaded conversation goes on after the ids this one used.
func (s *Conversation) loadInPlace(path string, lock *journal.Held) {
	used := s.m.IDs()
	s.turn.stop()
	s.jr.close()
	s.jr.lock = lock
	s.restore(path)
	if ids := s.m.IDs(); ids.Turn < used.Turn || ids.Request < used.Request {
		s.step(fsm.AdvanceIDs{IDs: used})
		s.startedTurn = s.m.State().Turn
	}
	s.out.stateShown = false
	s.out.state(s.m, &s.settings)
}

// find returns the folder's journaled conversation id.
func (f *Folder) find(id string) (ConversationInfo, error) {
	all, err := f.host.Conversations(f.dir)
	if err != nil {
		return ConversationInfo{}, err
	}
	for _, c := range all {
		if c.ID == id {
			return c, nil
		}
	}
	return ConversationInfo{}, fmt.Errorf("%w %q in %s", ErrUnknownConversation, id, f.dir)
}

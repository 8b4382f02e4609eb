package workspace

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// ErrUnknownConversation is returned by LoadConversation for an id that
// is none of the folder's journaled conversations.
var ErrUnknownConversation = errors.New("no such conversation")

// ConversationInfo describes one journaled conversation of a workspace
// folder: the folder's live journal, or one set aside by a reset or a
// switch.
type ConversationInfo struct {
	// ID is stable for the conversation's whole life, across restarts of
	// the process: it is derived from the journal's header (its folder
	// and creation time), which renames do not change. It is "" for a
	// conversation that is not journaled.
	ID      string
	Folder  string
	Created time.Time
	// Updated is the time of the journal's last write.
	Updated time.Time
	// Title is the first line of the conversation's first prompt, cut to
	// 80 characters; "" when it has no prompt yet.
	Title string
	// Live marks the conversation the folder's session holds.
	Live bool
	path string
}

// conversationID derives a conversation's id from its journal's header.
func conversationID(folder string, created time.Time) string {
	sum := sha256.Sum256([]byte(folder + "\x00" + created.UTC().Format(time.RFC3339Nano)))
	return "loom-" + hex.EncodeToString(sum[:10])
}

// stateDir is where the host keeps journals.
func (h *Host) stateDir() (string, error) {
	if h.opts.StateDir != "" {
		return h.opts.StateDir, nil
	}
	return defaultStateDir()
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
		base := strings.TrimSuffix(journalPath(dir, folder), ".jsonl")
		pattern = base + "*.jsonl"
	}
	paths, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	var out []ConversationInfo
	for _, p := range paths {
		c, err := readConversation(p)
		if err != nil || (folder != "" && c.Folder != folder) {
			continue
		}
		c.Live = p == journalPath(dir, c.Folder)
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, nil
}

// readConversation reads a journal's header and its first prompt.
func readConversation(path string) (ConversationInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return ConversationInfo{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ConversationInfo{}, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	line, err := br.ReadBytes('\n')
	if err != nil {
		return ConversationInfo{}, fmt.Errorf("%s: no header: %w", path, err)
	}
	var h journalHeader
	if err := json.Unmarshal(line, &h); err != nil || h.Journal != journalMagic || h.Version != journalVersion {
		return ConversationInfo{}, fmt.Errorf("%s: %w", path, errIncompatible)
	}
	c := ConversationInfo{ID: conversationID(h.Folder, h.Created), Folder: h.Folder, Created: h.Created, Updated: st.ModTime(), path: path}
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return c, nil // no prompt yet, or a torn last line
		}
		var rec journalRecord
		if json.Unmarshal(line, &rec) != nil || rec.Type != "UserInput" {
			continue
		}
		var in fsm.UserInput
		if json.Unmarshal(rec.Event, &in) == nil {
			c.Title = conversationTitle(in.Text)
			return c, nil
		}
	}
}

func conversationTitle(prompt string) string {
	title, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	if r := []rune(title); len(r) > 80 {
		title = string(r[:80]) + "…"
	}
	return title
}

// Conversation describes the session's live conversation; its ID is ""
// when the session does not journal it.
func (s *Conversation) Conversation(ctx context.Context) (ConversationInfo, error) {
	var c ConversationInfo
	var err error
	callErr := s.call(ctx, func() {
		if s.journal == nil {
			c = ConversationInfo{Folder: s.folder, Live: true}
			return
		}
		c, err = readConversation(s.journal.path)
		c.Live = true
	})
	if callErr != nil {
		return ConversationInfo{}, callErr
	}
	return c, err
}

// LoadConversation makes the folder's journaled conversation id the live
// one: the turn in flight is cancelled, the current journal is set aside
// (it stays listed and loadable) and the conversation is replayed from
// its journal. Loading the live conversation does nothing.
func (s *Conversation) LoadConversation(ctx context.Context, id string) error {
	all, err := s.host.Conversations(s.folder)
	if err != nil {
		return err
	}
	var target *ConversationInfo
	for i := range all {
		if all[i].ID == id {
			target = &all[i]
		}
	}
	if target == nil {
		return fmt.Errorf("%w %q in %s", ErrUnknownConversation, id, s.folder)
	}
	if target.Live {
		return nil
	}
	callErr := s.call(ctx, func() {
		path := s.journalFile()
		if s.journal == nil || s.journalLock == nil || path == "" {
			err = fmt.Errorf("cannot load conversation %s: this session does not journal (another process holds %s's journal)", id, s.folder)
			return
		}
		if s.busy() {
			s.step(fsm.Cancel{})
		}
		// Ids never go back in a session's life: the loaded conversation
		// goes on after the ids this session already used.
		used := s.m.IDs()
		if cerr := s.journal.close(); cerr != nil {
			s.log.Warn("closing the journal", "err", cerr)
		}
		s.journal = nil
		if rerr := os.Rename(path, asideName(path, "switch", time.Now())); rerr != nil {
			err = fmt.Errorf("set the live conversation aside: %w", rerr)
		} else if rerr := os.Rename(target.path, path); rerr != nil {
			err = fmt.Errorf("load conversation %s: %w", id, rerr)
		}
		if err != nil {
			s.m = fsm.New(s.machineConfig())
			s.startJournal(path)
		} else {
			s.restore(path)
		}
		if ids := s.m.IDs(); ids.Turn < used.Turn || ids.Request < used.Request {
			s.step(fsm.AdvanceIDs{IDs: used})
			s.startedTurn = s.m.State().Turn
		}
		s.notifyState()
	})
	if callErr != nil {
		return callErr
	}
	return err
}

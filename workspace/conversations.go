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
	"github.com/loom-lsp/loom-lsp/secret"
)

// ErrUnknownConversation is returned for an id that is none of the
// folder's journaled conversations.
var ErrUnknownConversation = errors.New("no such conversation")

// ErrOpenElsewhere is returned for a conversation that another loom-lsp
// process has open: it can be listed, not opened, renamed or deleted.
var ErrOpenElsewhere = errors.New("the conversation is open in another loom process")

// ConversationInfo describes one journaled conversation of a workspace
// folder.
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
	// Title is the title set by a rename, else the first line of the
	// conversation's first prompt, cut to 80 characters; "" when it has
	// no prompt yet.
	Title string
	// Turns counts the conversation's prompts.
	Turns int
	// Usage is the conversation's token usage, as of its last turn.
	Usage fsm.Usage
	// Live marks a conversation open in this process.
	Live bool
	// Elsewhere marks a conversation open in another loom-lsp process:
	// read-only here.
	Elsewhere bool
	path      string
}

// conversationMeta is what a journal's meta file (metaPath) keeps for
// the conversation lists, written at turn boundaries and on a rename.
type conversationMeta struct {
	Title string    `json:"title"`
	Named bool      `json:"named,omitempty"`
	Turns int       `json:"turns"`
	Usage fsm.Usage `json:"usage"`
	// Updated is the time of the conversation's last turn boundary (the
	// journal's modification time is too coarse to order two
	// conversations of one second).
	Updated time.Time `json:"updated"`
}

// metaPath is the meta file of the journal at path.
func metaPath(path string) string {
	return strings.TrimSuffix(path, ".jsonl") + ".meta.json"
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
	open := h.openJournals()
	var out []ConversationInfo
	for _, p := range paths {
		c, err := readConversation(p, h.redactor)
		if err != nil || (folder != "" && c.Folder != folder) {
			continue
		}
		c.Live = open[p]
		c.Elsewhere = !c.Live && journalLocked(p)
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
			if p := c.journalPathShared(); p != "" {
				open[p] = true
			}
		}
	}
	return open
}

// readConversation reads a journal's header and its meta file, or, when
// there is none (a journal of an older loom-lsp), its prompts.
func readConversation(path string, r *secret.Redactor) (ConversationInfo, error) {
	return readJournalInfo(path, true, r)
}

// readJournalInfo reads a journal's header, and its meta file when
// useMeta, else its prompts. The title is masked by r, as shown text is
// (a key pasted in a first prompt, a meta file of an older loom-lsp).
func readJournalInfo(path string, useMeta bool, r *secret.Redactor) (ConversationInfo, error) {
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
	if b, err := os.ReadFile(metaPath(path)); err == nil && useMeta {
		var m conversationMeta
		if json.Unmarshal(b, &m) == nil {
			c.Title, c.Turns, c.Usage = r.String(m.Title), m.Turns, m.Usage
			if m.Updated.After(c.Updated) {
				c.Updated = m.Updated
			}
			return c, nil
		}
	}
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return c, nil // the end, or a torn last line
		}
		var rec journalRecord
		if json.Unmarshal(line, &rec) != nil || rec.Type != "UserInput" {
			continue
		}
		c.Turns++
		var in fsm.UserInput
		if c.Title == "" && json.Unmarshal(rec.Event, &in) == nil {
			c.Title = conversationTitle(r, in.Text)
		}
	}
}

// conversationTitle is the title a prompt (or a rename) gives: its first
// line, at most 80 runes, masked as shown text is. It is masked before
// it is cut, so that no cut leaves a piece of a secret the mask no
// longer recognises.
func conversationTitle(r *secret.Redactor, prompt string) string {
	title, _, _ := strings.Cut(strings.TrimSpace(r.String(prompt)), "\n")
	if r := []rune(title); len(r) > 80 {
		title = string(r[:80]) + "…"
	}
	return title
}

// writeMeta writes the journal's meta file, on the owner goroutine.
func (s *Conversation) writeMeta() {
	path := s.journalPathShared()
	if path == "" || s.journal == nil {
		return
	}
	m := conversationMeta{Title: s.folder.host.redactor.String(s.title), Named: s.named, Turns: s.turns, Updated: time.Now()}
	_, m.Usage = s.m.Usage()
	if err := writeMetaFile(path, m); err != nil {
		s.folder.log.Warn("conversation meta file", "err", err)
	}
}

// writeMetaFile replaces the meta file of the journal at path.
func writeMetaFile(path string, m conversationMeta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp := metaPath(path) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, metaPath(path))
}

// readMeta restores the title and turn count of the journal at path.
func (s *Conversation) readMeta(path string) {
	c, err := readConversation(path, s.folder.host.redactor)
	if err != nil {
		return
	}
	s.title, s.turns = c.Title, c.Turns
	if b, err := os.ReadFile(metaPath(path)); err == nil {
		var m conversationMeta
		if json.Unmarshal(b, &m) == nil {
			s.named = m.Named
		}
	}
}

// Conversation describes this conversation; its ID is "" when it is not
// journaled.
func (s *Conversation) Conversation(ctx context.Context) (ConversationInfo, error) {
	var c ConversationInfo
	callErr := s.call(ctx, func() {
		c = ConversationInfo{ID: s.conversationID, Folder: s.folder.dir, Title: s.title, Turns: s.turns, Live: true}
		_, c.Usage = s.m.Usage()
		if path := s.journalPathShared(); path != "" {
			c.path = path
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
	title = conversationTitle(s.folder.host.redactor, title)
	return s.call(ctx, func() {
		s.named = title != ""
		if s.named {
			s.title = title
		} else {
			s.title = ""
			if path := s.journalPathShared(); path != "" {
				if c, err := readJournalInfo(path, false, s.folder.host.redactor); err == nil {
					s.title = c.Title
				}
			}
		}
		s.writeMeta()
		s.notify(Notification{Kind: NoteTitle, Text: s.title})
	})
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
	lock, err := lockJournal(target.path)
	if errors.Is(err, errJournalBusy) {
		return fmt.Errorf("%w: %s", ErrOpenElsewhere, id)
	}
	if err != nil {
		return err
	}
	handed := false
	callErr := s.call(ctx, func() {
		handed = true
		if _, err = s.step(fsm.Load{ID: id}); err != nil {
			lock.release()
			return
		}
		s.loadInPlace(target.path, lock)
	})
	if callErr != nil {
		if !handed {
			lock.release()
		}
		return callErr
	}
	return err
}

// loadInPlace performs fsm.LoadConversation: the current journal is
// closed and its lock released, and the machine is replayed from the
// journal at path, whose lock is handed over. Ids never go back: the
// loaded conversation goes on after the ids this one used.
func (s *Conversation) loadInPlace(path string, lock *journalLock) {
	used := s.m.IDs()
	s.cancelInFlight()
	s.closeJournal()
	s.journalLock = lock
	s.restore(path)
	if ids := s.m.IDs(); ids.Turn < used.Turn || ids.Request < used.Request {
		s.step(fsm.AdvanceIDs{IDs: used})
		s.startedTurn = s.m.State().Turn
	}
	s.stateShown = false
	s.notifyState()
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

package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// A folder's conversations: each has its own journal and journal lock, so
// that two conversations, or two loom-lsp processes on one folder, never
// write one journal. The folder's first journal is journal.Path(dir,
// folder); a conversation started while that one exists gets a journal
// of its own beside it (newJournalPath). A journal open in another
// process is listed (Elsewhere), never opened here.

// Current returns the folder's most recently used open conversation. When
// none is open, it opens the most recent journaled one, unless another
// process has it open, else a new one.
func (f *Folder) Current() (*Conversation, error) {
	f.currentMu.Lock() // one caller opens it, the others get it
	defer f.currentMu.Unlock()
	f.mu.Lock()
	if len(f.convs) > 0 {
		c := f.convs[0]
		f.mu.Unlock()
		return c, nil
	}
	f.mu.Unlock()
	return f.start(f.latestOpening())
}

// New starts a new conversation, beside the open ones, and makes it the
// most recent.
func (f *Folder) New() (*Conversation, error) {
	f.currentMu.Lock()
	defer f.currentMu.Unlock()
	return f.start(f.newOpening(false))
}

// Conversation returns the open conversation id, opening it from its
// journal when this process does not have it open. "" is Current.
func (f *Folder) Conversation(id string) (*Conversation, error) {
	if id == "" {
		return f.Current()
	}
	if c := f.open(id); c != nil {
		return c, nil
	}
	// One opener at a time (Current, New and this): a journal this
	// process locked is registered before another opener lists the
	// journals, which would take it for one open in another process and
	// start a new conversation in its place (two requests naming one
	// conversation as a server starts: VS Code's status and panel state).
	f.currentMu.Lock()
	defer f.currentMu.Unlock()
	if c := f.open(id); c != nil {
		return c, nil // opened meanwhile, here
	}
	target, err := f.find(id)
	if err != nil {
		return nil, err
	}
	lock, err := journal.Lock(target.Path)
	if errors.Is(err, journal.ErrBusy) {
		if c := f.open(id); c != nil {
			return c, nil // opened meanwhile, here
		}
		return nil, fmt.Errorf("%w: %s", ErrOpenElsewhere, id)
	}
	if err != nil {
		return nil, err
	}
	return f.start(opening{id: id, path: target.Path, lock: lock})
}

// Open returns the conversation id if this process has it open, else nil.
func (f *Folder) open(id string) *Conversation {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.convs {
		if c.ID() == id {
			return c
		}
	}
	return nil
}

// Touch makes c the folder's most recently used conversation.
func (f *Folder) Touch(c *Conversation) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.Index(f.convs, c); i > 0 {
		f.convs = slices.Insert(slices.Delete(f.convs, i, i+1), 0, c)
	}
}

// Open returns the conversations open in this process, most recently
// used first.
func (f *Folder) Open() []*Conversation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.convs)
}

// CloseConversation closes the open conversation id (its journal stays).
// Closing one that is not open does nothing.
func (f *Folder) CloseConversation(id string) {
	if c := f.open(id); c != nil {
		f.forget(c)
		c.Close()
	}
}

// forget takes c off the open conversations.
func (f *Folder) forget(c *Conversation) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.Index(f.convs, c); i >= 0 {
		f.convs = slices.Delete(f.convs, i, i+1)
	}
}

// Rename sets the title of the conversation id, open here or not.
func (f *Folder) Rename(ctx context.Context, id, title string) error {
	if c := f.open(id); c != nil {
		return c.Rename(ctx, title)
	}
	target, err := f.find(id)
	if err != nil {
		return err
	}
	if target.Elsewhere {
		return fmt.Errorf("%w: %s", ErrOpenElsewhere, id)
	}
	lock, err := journal.Lock(target.Path)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrOpenElsewhere, id)
	}
	defer lock.Release()
	m := journal.Meta{Title: journal.Title(f.host.redactor, title), Named: strings.TrimSpace(title) != "", Turns: target.Turns, Usage: target.Usage, Updated: target.Updated}
	if !m.Named {
		if c, err := journal.ReadInfo(target.Path, false, f.host.redactor); err == nil {
			m.Title = c.Title
		}
	}
	return journal.WriteMeta(target.Path, m)
}

// Delete closes the conversation id if it is open here and moves its
// journal to the trash directory (trashDir), where it is kept for
// [journal] max_age. A conversation open in another process is refused.
func (f *Folder) Delete(id string) error {
	if c := f.open(id); c != nil {
		f.forget(c)
		c.Close()
	}
	target, err := f.find(id)
	if err != nil {
		return err
	}
	lock, err := journal.Lock(target.Path)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrOpenElsewhere, id)
	}
	defer lock.Release()
	trash := filepath.Join(filepath.Dir(target.Path), trashDir)
	if err := os.MkdirAll(trash, 0o700); err != nil {
		return err
	}
	dest := filepath.Join(trash, filepath.Base(target.Path))
	if err := os.Rename(target.Path, dest); err != nil {
		return fmt.Errorf("delete conversation %s: %w", id, err)
	}
	os.Rename(journal.MetaPath(target.Path), journal.MetaPath(dest))
	now := time.Now()
	os.Chtimes(dest, now, now) // kept for max_age from now
	os.Remove(target.Path + ".lock")
	f.log.Info("conversation deleted", "id", id, "kept", dest)
	return nil
}

// trashDir is the directory, in the state directory, that keeps the
// journals of deleted conversations until the retention prunes them.
const trashDir = "trash"

// start opens a conversation from o and makes it the most recent.
func (f *Folder) start(o opening) (*Conversation, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		if o.lock != nil {
			o.lock.Release()
		}
		return nil, errFolderClosed
	}
	c := newConversation(f, o)
	f.convs = slices.Insert(f.convs, 0, c)
	f.mu.Unlock()
	f.heldRestored.Do(func() { c.loop.post(c.restoreHeld) })
	go c.run()
	return c, nil
}

// latestOpening is where the folder's first conversation starts: the most
// recently updated journaled conversation, unless another process has it
// open (or HostOptions.NewConversation asks for a new one); else a new
// conversation.
func (f *Folder) latestOpening() opening {
	if f.host.opts.NewConversation {
		return f.newOpening(true)
	}
	if first := journalFile(f.host.stateDir, f.dir, f.log); first != "" {
		// A journal this version cannot read is set aside by restore.
		if _, err := readConversation(first, f.host.redactor); errors.Is(err, journal.ErrIncompatible) {
			if lock, err := journal.Lock(first); err == nil {
				return opening{id: journal.UnjournaledID(), path: first, lock: lock}
			}
		}
	}
	all, err := f.host.Conversations(f.dir)
	if err != nil || len(all) == 0 || all[0].Elsewhere || all[0].Live {
		return f.newOpening(false)
	}
	lock, err := journal.Lock(all[0].Path)
	if err != nil {
		return f.newOpening(false)
	}
	return opening{id: all[0].ID, path: all[0].Path, lock: lock}
}

// newOpening is where a new conversation starts: the folder's first
// journal path when it is free (setting aside the journal there when
// setAside), else a journal of its own.
func (f *Folder) newOpening(setAside bool) opening {
	created := time.Now()
	first := journalFile(f.host.stateDir, f.dir, f.log)
	if first == "" {
		return opening{id: journal.UnjournaledID()}
	}
	_, statErr := os.Stat(first)
	if setAside || errors.Is(statErr, os.ErrNotExist) {
		if lock, err := journal.Lock(first); err == nil {
			if _, err := os.Stat(first); setAside || errors.Is(err, os.ErrNotExist) {
				return opening{id: journal.ID(f.dir, created), path: first, lock: lock, fresh: true, setAside: setAside, created: created}
			}
			lock.Release() // created meanwhile by another process
		}
	}
	path := newJournalPath(first, created)
	lock, err := journal.Lock(path)
	if err != nil {
		return opening{id: journal.UnjournaledID(), notice: err.Error() + ": this conversation is not journaled"}
	}
	return opening{id: journal.ID(f.dir, created), path: path, lock: lock, fresh: true, created: created}
}

// newJournalPath names the journal of a conversation created at created
// beside the folder's first journal, first.
func newJournalPath(first string, created time.Time) string {
	return journal.AsideName(first, "conversation", created)
}

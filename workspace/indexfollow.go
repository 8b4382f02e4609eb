package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/loom-lsp/loom-lsp/workspace/changes"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// indexFollower brings the user's git index to the agent's commits whose
// index update a held .git/index.lock stopped, as soon as the lock is
// released: left until the next turn, a plain `git commit` in between
// would revert the agent's change (issue 47.7). One per folder; the
// updates are made in commit order, under the folder's worktree lock.
type indexFollower struct {
	dir string
	// life is the folder's: the follower stops when the folder closes.
	life context.Context
	// worktreeMu is the folder's worktree lock (Folder.worktreeMu).
	worktreeMu *sync.Mutex
	// goWorker runs the follower on a goroutine the folder waits for.
	goWorker func(func())

	mu      sync.Mutex
	pending []indexLeft
	running bool
}

// indexLeft is one commit's index entries left by a held lock, and how
// to tell the conversation that made the commit.
type indexLeft struct {
	entries []gitcommit.Entry
	tell    func(kind NotificationKind, text string)
}

// indexRecheck bounds the wait for the lock's release between two looks,
// should the watcher miss the removal (a file system without inotify).
const indexRecheck = 2 * time.Second

// follow queues left and starts the follower if it is not running.
func (fw *indexFollower) follow(left indexLeft, scrub string) {
	fw.mu.Lock()
	fw.pending = append(fw.pending, left)
	start := !fw.running
	fw.running = true
	fw.mu.Unlock()
	if start {
		fw.goWorker(func() { fw.run(scrub) })
	}
}

// run waits for the lock's release and updates the index, until nothing
// is pending or the folder closes.
func (fw *indexFollower) run(scrub string) {
	for {
		fw.mu.Lock()
		if len(fw.pending) == 0 || fw.life.Err() != nil {
			fw.pending, fw.running = nil, false
			fw.mu.Unlock()
			return
		}
		left := fw.pending[0]
		fw.mu.Unlock()
		repo, err := gitcommit.Open(fw.life, fw.dir, scrub)
		if err != nil {
			fw.drop()
			continue
		}
		if !waitIndexUnlocked(fw.life, filepath.Join(repo.GitDir, "index.lock")) {
			continue // the folder closes
		}
		fw.worktreeMu.Lock()
		rest, rep := fw.sync(repo, left.entries)
		fw.worktreeMu.Unlock()
		if len(rep.Locked) > 0 {
			// Taken again before loom could write it: wait anew.
			fw.mu.Lock()
			fw.pending[0].entries = rep.Locked
			fw.mu.Unlock()
			continue
		}
		fw.drop()
		if len(rest) > 0 {
			left.tell(indexFollowedNote(rest, rep))
		}
	}
}

// sync updates the index for the entries HEAD still holds; it returns
// them and the report. The worktree lock is held.
func (fw *indexFollower) sync(repo *gitcommit.Repo, entries []gitcommit.Entry) ([]gitcommit.Entry, gitcommit.IndexReport) {
	fresh, err := gitcommit.Open(fw.life, repo.Top)
	if err == nil {
		repo = fresh // HEAD as it is now
	}
	rest := repo.InHead(fw.life, entries)
	if len(rest) == 0 {
		return nil, gitcommit.IndexReport{}
	}
	return rest, repo.SyncIndex(fw.life, rest, 0)
}

// drop drops the first pending update.
func (fw *indexFollower) drop() {
	fw.mu.Lock()
	if len(fw.pending) > 0 {
		fw.pending = fw.pending[1:]
	}
	fw.mu.Unlock()
}

// indexFollowedNote says that the index now follows the agent's commit.
func indexFollowedNote(entries []gitcommit.Entry, rep gitcommit.IndexReport) (NotificationKind, string) {
	files := make([]string, len(entries))
	for i, e := range entries {
		files[i] = e.Path
	}
	text := "the index lock is free now: git's index follows the agent's commit for " + strings.Join(files, ", ")
	if notes := changes.IndexNotes(rep); len(notes) > 0 {
		text += "; " + strings.Join(notes, "; ")
	}
	return NoteInfo, text
}

// waitIndexUnlocked waits until lock does not exist, watching its
// directory; false when ctx ends first.
func waitIndexUnlocked(ctx context.Context, lock string) bool {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		if w.Add(filepath.Dir(lock)) == nil {
			events, errs = w.Events, w.Errors
		}
	}
	recheck := time.NewTicker(indexRecheck)
	defer recheck.Stop()
	for {
		if _, err := os.Lstat(lock); errors.Is(err, os.ErrNotExist) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-events:
		case <-errs:
		case <-recheck.C:
		}
	}
}

// leaveIndex hands the follower a commit's index entries that a held
// lock kept out of the index; the conversation is told when they are in.
// On the conversation's goroutine.
func (s *Conversation) leaveIndex(entries []gitcommit.Entry) {
	if len(entries) == 0 {
		return
	}
	turn := s.m.State().Turn
	tell := func(kind NotificationKind, text string) {
		s.loop.post(func() { s.out.notify(Notification{Kind: kind, Turn: turn, Text: text, Visible: true}) })
	}
	s.folder.indexFollow.follow(indexLeft{entries: entries, tell: tell}, s.cfg.Model.APIKeyEnv)
}

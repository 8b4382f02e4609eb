package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// ErrBusy says another process holds a folder's journal.
var ErrBusy = errors.New("another loom-lsp process is journaling this folder's conversation")

// Held is a session's hold on one journal: a POSIX record lock
// (fcntl F_SETLK) on path+".lock", which survives the journal's renames,
// against other processes, and an entry in heldJournals against other
// sessions of this process.
//
// Not flock: a flock belongs to the open file, and a child forked at the
// moment the daemon is killed keeps a copy of every descriptor until it
// execs. Under load that copy lived on after the daemon died (a git the
// session was starting), so the restarted daemon found its own dead
// predecessor "journaling" and did not resume the conversation. A record
// lock belongs to the process: fork does not pass it on and it goes when
// the process does. Record locks do not exclude the process that holds
// them, hence heldJournals; and closing any descriptor of the file drops
// them, so the file is opened only by the session that locks it.
type Held struct {
	path string
	f    *os.File
}

var (
	heldMu       sync.Mutex
	heldJournals = map[string]bool{} // lock paths held by this process
)

// Lock takes the lock of the journal at path for as long as the
// returned lock is not released. Two processes on one folder (two
// editors, or the daemon and exec) would otherwise interleave their
// writes.
func Lock(path string) (*Held, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	lockPath := path + ".lock"
	heldMu.Lock()
	defer heldMu.Unlock()
	if heldJournals[lockPath] {
		return nil, ErrBusy
	}
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 0, Len: 0} // the whole file
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		f.Close()
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("journal: lock %s: %w", path, err)
	}
	heldJournals[lockPath] = true
	return &Held{path: lockPath, f: f}, nil
}

// Release gives the lock up.
func (l *Held) Release() {
	heldMu.Lock()
	defer heldMu.Unlock()
	l.f.Close() // drops the record lock
	delete(heldJournals, l.path)
}

// Locked reports whether the journal at path is open: held by a
// conversation of this process, or locked by another process.
func Locked(path string) bool {
	lockPath := path + ".lock"
	heldMu.Lock()
	defer heldMu.Unlock()
	if heldJournals[lockPath] {
		return true
	}
	return lockedElsewhere(lockPath)
}

// lockedElsewhere reports whether another process holds the lock file at
// lockPath (F_GETLK: it takes nothing). heldMu is held, and the path is
// not held by this process (closing a descriptor of a file drops this
// process's record locks on it).
func lockedElsewhere(lockPath string) bool {
	f, err := os.Open(lockPath)
	if err != nil {
		return false
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		return false
	}
	return lk.Type != syscall.F_UNLCK
}

// HeldHere reports whether a conversation of this process holds
// the journal at path.
func HeldHere(path string) bool {
	heldMu.Lock()
	defer heldMu.Unlock()
	return heldJournals[path+".lock"]
}

package gitworktree

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/internal/gitcmd"
)

// States of a worktree, in its manifest.
const (
	// StateCreating: the manifest is written, git worktree add may not
	// have finished.
	StateCreating = "creating"
	// StateActive: its conversation works in it.
	StateActive = "active"
	// StateKept: the conversation ended and left work in it (kept for
	// the user, or a merge left conflicts).
	StateKept = "kept"
	// StateMerged: its work is in the user's tree; nothing is left.
	StateMerged = "merged"
)

// Manifest is what a worktree's <name>.json records.
type Manifest struct {
	// Name is the worktree's directory name under the manager's Dir.
	Name string `json:"name"`
	// Path is the worktree's directory (Dir/Name).
	Path string `json:"path"`
	// Repo is the top of the user's repository; Folder the user's
	// workspace folder (Repo or a directory inside it).
	Repo   string `json:"repo"`
	Folder string `json:"folder"`
	// Conversation is the owner conversation's id ("" until known).
	Conversation string `json:"conversation,omitempty"`
	// PID and Start identify the owner process (Start: its start time
	// as the kernel counts it, so that a reused pid is not mistaken for
	// the owner).
	PID   int    `json:"pid"`
	Start string `json:"start,omitempty"`
	// Base is the commit the worktree was checked out at.
	Base string `json:"base"`
	// State is one of the State constants.
	State string `json:"state"`
	// Created is when it was made (RFC 3339).
	Created string `json:"created"`
}

// Manager holds the worktrees under Dir.
type Manager struct {
	// Dir is <state>/worktrees.
	Dir string
	// Budget is the size on disk the worktrees may take together
	// (worktrees.max_size_mb), in bytes; 0: none.
	Budget int64
}

// Worktree is one created worktree.
type Worktree struct {
	Manifest
	// Folder is the conversation's folder inside the worktree: Path, or
	// the same directory below it that Manifest.Folder is below Repo.
	Dir string
	// Included are the untracked files copied from the user's tree
	// (.worktreeinclude), slash-separated.
	Included []string
}

// git runs git with the pinned configuration in dir and returns its
// standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := gitcmd.Command(ctx, dir, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Create makes a worktree of folder's repository at its HEAD, for the
// conversation id (may be ""), owned by this process.
func (m *Manager) Create(ctx context.Context, folder, conversation string) (*Worktree, error) {
	folder, err := filepath.EvalSymlinks(folder)
	if err != nil {
		return nil, err
	}
	top, err := git(ctx, folder, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("a worktree needs a git repository: %w", err)
	}
	repo := strings.TrimSpace(top)
	base, err := git(ctx, repo, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return nil, fmt.Errorf("a worktree needs a commit to start from: %w", err)
	}
	if err := os.MkdirAll(m.Dir, 0o700); err != nil {
		return nil, err
	}
	name := worktreeName(repo)
	mf := Manifest{Name: name, Path: filepath.Join(m.Dir, name), Repo: repo, Folder: folder,
		Conversation: conversation, PID: os.Getpid(), Start: processStart(os.Getpid()),
		Base: strings.TrimSpace(base), State: StateCreating, Created: time.Now().UTC().Format(time.RFC3339)}
	// The manifest first: a crash from here on leaves it to find.
	if err := m.save(mf); err != nil {
		return nil, err
	}
	if _, err := git(ctx, repo, "worktree", "add", "--detach", "--quiet", mf.Path, mf.Base); err != nil {
		m.drop(ctx, mf)
		return nil, err
	}
	wt := &Worktree{Manifest: mf, Dir: mf.Path}
	if rel, err := filepath.Rel(repo, folder); err == nil && rel != "." && filepath.IsLocal(rel) {
		wt.Dir = filepath.Join(mf.Path, rel)
	}
	wt.Included, err = copyIncluded(ctx, repo, mf.Path)
	if err != nil {
		m.drop(ctx, mf)
		return nil, fmt.Errorf(".worktreeinclude: %w", err)
	}
	wt.State = StateActive
	if err := m.save(wt.Manifest); err != nil {
		m.drop(ctx, mf)
		return nil, err
	}
	return wt, nil
}

// worktreeName is the repository's base name and a random suffix.
func worktreeName(repo string) string {
	var b [6]byte
	rand.Read(b[:])
	base := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, filepath.Base(repo))
	if len(base) > 40 {
		base = base[:40]
	}
	return base + "-" + hex.EncodeToString(b[:])
}

// manifestPath is where mf's manifest lives.
func (m *Manager) manifestPath(name string) string { return filepath.Join(m.Dir, name+".json") }

// save writes mf's manifest atomically.
func (m *Manager) save(mf Manifest) error {
	b, err := json.MarshalIndent(mf, "", "  ")
	if err != nil {
		return err
	}
	tmp := m.manifestPath(mf.Name) + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, m.manifestPath(mf.Name))
}

// SetState records a worktree's new state (and conversation, when not
// "").
func (m *Manager) SetState(name, state, conversation string) error {
	mf, err := m.load(name)
	if err != nil {
		return err
	}
	mf.State = state
	if conversation != "" {
		mf.Conversation = conversation
	}
	return m.save(mf)
}

// load reads the manifest of name.
func (m *Manager) load(name string) (Manifest, error) {
	var mf Manifest
	b, err := os.ReadFile(m.manifestPath(name))
	if err != nil {
		return mf, err
	}
	if err := json.Unmarshal(b, &mf); err != nil {
		return mf, fmt.Errorf("worktree manifest %s: %w", name, err)
	}
	if mf.Name != name || mf.Path != filepath.Join(m.Dir, name) {
		return mf, fmt.Errorf("worktree manifest %s names another worktree (%s)", name, mf.Path)
	}
	return mf, nil
}

// Remove removes the worktree name: git worktree remove --force, git
// worktree prune, then its manifest. A worktree whose repository is gone
// is removed from the disk.
func (m *Manager) Remove(ctx context.Context, name string) error {
	mf, err := m.load(name)
	if err != nil {
		return err
	}
	return m.drop(ctx, mf)
}

// drop removes mf's worktree and manifest.
func (m *Manager) drop(ctx context.Context, mf Manifest) error {
	var errs []error
	if _, err := os.Stat(mf.Repo); err == nil {
		if _, err := os.Lstat(mf.Path); err == nil {
			if _, err := git(ctx, mf.Repo, "worktree", "remove", "--force", "--force", mf.Path); err != nil {
				errs = append(errs, err)
			}
		}
		if _, err := git(ctx, mf.Repo, "worktree", "prune"); err != nil {
			errs = append(errs, err)
		}
	}
	// What git left (a worktree git no longer knew, a repository gone).
	if err := os.RemoveAll(mf.Path); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 || !exists(mf.Path) {
		if err := os.Remove(m.manifestPath(mf.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return errors.Join(errs...)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

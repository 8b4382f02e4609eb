package gitcommit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Snapshot is the set of files that differ from HEAD (modified,
// staged, deleted or untracked, ignored files excepted) in a worktree, with
// a hash of each one's content. Two snapshots taken around a tool batch
// that ran bash tell which files bash changed: those clean before and
// dirty after.
type Snapshot struct {
	top string
	// dirty maps a path relative to top (slash-separated) to a hash of its
	// content, "-" when it does not exist.
	dirty map[string]string
}

// TakeSnapshot snapshots the worktree that contains dir; nil when dir is
// not in a git repository or git fails.
func TakeSnapshot(ctx context.Context, dir string) *Snapshot {
	g := runner{dir: dir}
	out, err := g.run(ctx, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return nil
	}
	top := strings.TrimSpace(out)
	g.dir = top
	out, err = g.run(ctx, "", "status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all")
	if err != nil {
		return nil
	}
	snap := &Snapshot{top: top, dirty: map[string]string{}}
	for _, rec := range NulFields(out) {
		var path string
		switch rec[0] {
		case '1': // 1 XY sub mH mI mW hH hI path
			if f := strings.SplitN(rec, " ", 9); len(f) == 9 {
				path = f[8]
			}
		case 'u': // u XY sub m1 m2 m3 mW h1 h2 h3 path
			if f := strings.SplitN(rec, " ", 11); len(f) == 11 {
				path = f[10]
			}
		case '?':
			path = strings.TrimPrefix(rec, "? ")
		}
		if path != "" {
			snap.dirty[path] = contentHash(filepath.Join(top, filepath.FromSlash(path)))
		}
	}
	return snap
}

// contentHash hashes a file's content, "-" when it cannot be read.
func contentHash(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "-"
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// ChangedSince compares the snapshot before a batch with this one (after
// it). changed are the files clean before and dirty after: the batch made
// them. leftDirty are files that were already dirty before and changed
// again: the user's changes are mixed in, so they are not committed. Paths
// in skip (the edit tools' files) and outside prefix (the workspace
// folder, relative to top, "" for all) are ignored.
func (after *Snapshot) ChangedSince(before *Snapshot, prefix string, skip map[string]bool) (changed, leftDirty []string) {
	if before == nil || after == nil || before.top != after.top {
		return nil, nil
	}
	for path, hash := range after.dirty {
		if skip[path] || (prefix != "" && !strings.HasPrefix(path, prefix+"/")) {
			continue
		}
		was, dirtyBefore := before.dirty[path]
		switch {
		case !dirtyBefore:
			changed = append(changed, path)
		case was != hash:
			leftDirty = append(leftDirty, path)
		}
	}
	// A file dirty before and clean now was reverted by the batch: it
	// matches HEAD, so there is nothing to commit.
	sort.Strings(changed)
	sort.Strings(leftDirty)
	return changed, leftDirty
}

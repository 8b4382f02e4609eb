package gitcommit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Ignored returns which of paths (relative to the root, slash-separated)
// git ignores; a path HEAD tracks is never ignored. It reads neither the
// index nor the worktree beyond paths.
func (r *Repo) Ignored(ctx context.Context, paths []string) map[string]bool {
	out := map[string]bool{}
	if len(paths) == 0 {
		return out
	}
	tracked, _ := r.treeEntries(ctx, r.Head, paths)
	var check []string
	for _, p := range paths {
		if _, ok := tracked[p]; !ok {
			check = append(check, p)
		}
	}
	if len(check) == 0 {
		return out
	}
	return checkIgnore(ctx, r.git, check)
}

// IgnoredIn returns which of paths (relative to dir, slash-separated)
// the git repository holding dir ignores, in one git process; none when
// dir is in no repository.
func IgnoredIn(ctx context.Context, dir string, paths []string) map[string]bool {
	if len(paths) == 0 {
		return map[string]bool{}
	}
	return checkIgnore(ctx, runner{dir: dir}, paths)
}

// checkIgnore asks git which of paths (relative to g's directory) its
// ignore rules match.
func checkIgnore(ctx context.Context, g runner, paths []string) map[string]bool {
	out := map[string]bool{}
	// Exit status 1 means none is ignored.
	ls, _ := g.run(ctx, strings.Join(paths, "\x00")+"\x00", "check-ignore", "--no-index", "-z", "--stdin")
	for _, p := range NulFields(ls) {
		out[p] = true
	}
	return out
}

// HeadTexts returns the texts HEAD has for paths (relative to the root,
// slash-separated), as the worktree has them (filters applied); a path
// HEAD does not have as a file is absent. Two git processes, whatever
// the number of paths.
func (r *Repo) HeadTexts(ctx context.Context, paths []string) (map[string]string, error) {
	out := map[string]string{}
	tree, err := r.treeEntries(ctx, r.Head, paths)
	if err != nil || len(tree) == 0 {
		return out, err
	}
	var in strings.Builder
	var order []string
	for _, p := range paths {
		if e, ok := tree[p]; ok && (e.mode == "100644" || e.mode == "100755") {
			in.WriteString(e.oid + " " + p + "\n")
			order = append(order, p)
		}
	}
	if len(order) == 0 {
		return out, nil
	}
	raw, err := r.git.run(ctx, in.String(), "cat-file", "--batch", "--filters")
	if err != nil {
		return nil, err
	}
	// Each answer: "<oid> blob <size>\n<content>\n".
	for _, p := range order {
		head, rest, ok := strings.Cut(raw, "\n")
		f := strings.Fields(head)
		if !ok || len(f) != 3 {
			return nil, errors.New("git cat-file --batch: unexpected answer " + head)
		}
		var size int
		for _, c := range f[2] {
			size = size*10 + int(c-'0')
		}
		if size > len(rest) {
			return nil, errors.New("git cat-file --batch: short answer")
		}
		out[p] = rest[:size]
		raw = strings.TrimPrefix(rest[size:], "\n")
	}
	return out, nil
}

// Nested returns the root of the submodule or nested repository holding
// rel, "" when rel belongs to the worktree itself.
func (r *Repo) Nested(rel string) string { return r.nestedRepo(rel) }

// Dirty returns the worktree's files that differ from HEAD or are
// untracked (not ignored), relative to the root, slash-separated. It
// costs one git status: call it rarely.
//
// git status does not look into submodules' worktrees
// (--ignore-submodules=dirty, which .gitmodules cannot undo): that runs
// a git status in each submodule under the submodule's own
// configuration, and a submodule whose directory was missing is one a
// sandboxed command can make, with a clean filter git would run with the
// user's rights. A submodule moved to another commit is still reported.
func (r *Repo) Dirty(ctx context.Context) ([]string, error) {
	out, err := r.git.run(ctx, "", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=dirty")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rec := range strings.Split(out, "\x00") {
		if len(rec) > 3 {
			paths = append(paths, rec[3:])
		}
	}
	return paths, nil
}

// Backup writes the file rel as it is on disk as a git object and
// returns its name ("" when there is no regular file), so that a
// replaced version can be got back (git cat-file -p).
func (r *Repo) Backup(ctx context.Context, rel string) (string, error) {
	st, err := os.Lstat(filepath.Join(r.Top, filepath.FromSlash(rel)))
	if err != nil || !st.Mode().IsRegular() {
		return "", nil
	}
	out, err := r.git.run(ctx, "", "hash-object", "-w", "--no-filters", "--", rel)
	return strings.TrimSpace(out), err
}

// Merge3 merges the changes from base to theirs into ours (git
// merge-file); clean is false when they overlap.
func (r *Repo) Merge3(ctx context.Context, ours, base, theirs string) (merged string, clean bool, err error) {
	return r.merge3(ctx, ours, base, theirs)
}

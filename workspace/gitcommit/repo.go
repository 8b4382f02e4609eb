package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotRepository is returned by Open for a folder outside any git
// worktree.
var ErrNotRepository = errors.New("not a git repository")

// ErrInProgress is wrapped by Prepare's, Commit's and Undo's errors while
// a merge, rebase, cherry-pick, revert, am or bisect is in progress; the
// error says which and what the user can do.
var ErrInProgress = errors.New("a git operation is in progress")

// Repo is the git worktree a commit is made in, as found when it was
// opened.
type Repo struct {
	git runner
	// Top is the worktree's root (absolute).
	Top string
	// GitDir is the worktree's own git directory (absolute).
	GitDir string
	// HooksDir is where git looks for hooks: core.hooksPath, else the
	// common git directory's hooks (absolute).
	HooksDir string
	// Head is HEAD's commit when opened, "" on an unborn branch.
	Head string
	// MaxFileBytes, when > 0, is the largest file Prepare takes: a
	// bigger one is left out (Plan.Skipped).
	MaxFileBytes int64
	// oidLen is the length of the repository's object names in hex.
	oidLen int
}

// Open finds the worktree that contains dir. scrub names environment
// variables git and the hooks must not see (the model's API key; every
// *_API_KEY is removed anyway).
func Open(ctx context.Context, dir string, scrub ...string) (*Repo, error) {
	g := runner{dir: dir, scrub: scrub, readHooksPath: true}
	args := []string{"rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-path", "hooks", "--show-object-format"}
	out, err := g.run(ctx, "", append(args, "HEAD")...)
	if err != nil {
		// An unborn branch has no HEAD to resolve.
		if out, err = g.run(ctx, "", args...); err != nil {
			return nil, fmt.Errorf("%w: %s", ErrNotRepository, dir)
		}
	}
	f := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(f) < 4 || f[0] == "" {
		return nil, fmt.Errorf("%w: %s (no worktree)", ErrNotRepository, dir)
	}
	r := &Repo{Top: f[0], GitDir: f[1], HooksDir: f[2], oidLen: 40}
	if !filepath.IsAbs(r.HooksDir) {
		r.HooksDir = filepath.Join(dir, r.HooksDir)
	}
	if f[3] == "sha256" {
		r.oidLen = 64
	}
	if len(f) > 4 {
		r.Head = f[4]
	}
	g.dir, g.readHooksPath = r.Top, false
	g.pins = worktreeFilterPins(ctx, g, r.Top, r.GitDir)
	r.git = g
	return r, nil
}

// worktreeFilterPins pins empty the filters (filter.<driver>.clean,
// .smudge, .process) that a file of the worktree defines — one the
// repository's configuration includes (include.path = ../.gitconfig):
// a file the agent may write (the sandbox keeps the included files that
// exist read-only, but cannot keep one at the folder's top level from
// being made). The filters the user's own files define (.git/config,
// the global and system files: Git LFS) stay.
func worktreeFilterPins(ctx context.Context, g runner, top, gitDir string) [][2]string {
	out, err := g.run(ctx, "", "config", "--show-origin", "-z", "--get-regexp", `^filter\..+\.(clean|smudge|process)$`)
	if err != nil {
		return nil // none set
	}
	var pins [][2]string
	recs := strings.Split(out, "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		origin, ok := strings.CutPrefix(recs[i], "file:")
		key, _, _ := strings.Cut(recs[i+1], "\n")
		if !ok || key == "" {
			continue
		}
		if !filepath.IsAbs(origin) {
			origin = filepath.Join(top, origin)
		}
		origin = filepath.Clean(origin)
		inside := func(dir string) bool {
			return origin == dir || strings.HasPrefix(origin, dir+string(filepath.Separator))
		}
		if inside(top) && !inside(gitDir) && !inside(filepath.Join(top, ".git")) {
			pins = append(pins, [2]string{key, ""})
		}
	}
	return pins
}

// InProgress returns the git operation in progress in the worktree, with
// what to do about it, or "" when there is none.
func (r *Repo) InProgress() (op, advice string) {
	exists := func(name string) bool {
		_, err := os.Lstat(filepath.Join(r.GitDir, name))
		return err == nil
	}
	switch {
	case exists("MERGE_HEAD"):
		return "a merge", "conclude it with git commit, or abort it with git merge --abort"
	case exists("rebase-apply/applying"):
		return "git am", "finish it with git am --continue, or abort it with git am --abort"
	case exists("rebase-merge"), exists("rebase-apply"):
		return "a rebase", "finish it with git rebase --continue, or abort it with git rebase --abort"
	case exists("CHERRY_PICK_HEAD"):
		return "a cherry-pick", "finish it with git cherry-pick --continue, or abort it with git cherry-pick --abort"
	case exists("REVERT_HEAD"):
		return "a revert", "finish it with git revert --continue, or abort it with git revert --abort"
	case exists("BISECT_LOG"):
		return "a bisect", "end it with git bisect reset"
	}
	return "", ""
}

// checkState returns an error wrapping ErrInProgress when an operation is
// in progress.
func (r *Repo) checkState() error {
	if op, advice := r.InProgress(); op != "" {
		return fmt.Errorf("%w: %s is in progress in %s; %s", ErrInProgress, op, r.Top, advice)
	}
	return nil
}

// Rel returns path (absolute) relative to the worktree's root,
// slash-separated, and false when it is not inside the worktree.
func (r *Repo) Rel(path string) (string, bool) {
	rel, err := filepath.Rel(r.Top, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// nestedRepo returns the root (relative, slash-separated) of a git
// repository nested in the worktree that holds rel (a submodule, or a
// repository cloned inside), "" when rel belongs to the worktree itself.
func (r *Repo) nestedRepo(rel string) string {
	dir := filepath.Dir(filepath.FromSlash(rel))
	for dir != "." && dir != string(filepath.Separator) {
		if _, err := os.Lstat(filepath.Join(r.Top, dir, ".git")); err == nil {
			return filepath.ToSlash(dir)
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

// HookFiles returns those of paths (relative to the root,
// slash-separated) that the user's git hooks would execute or read as
// their configuration: anything in the hooks directory, and the hook
// managers' files (.husky/, .pre-commit-config.yaml, lefthook.yml,
// .lefthook.yml, lefthook-local.yml).
func (r *Repo) HookFiles(paths []string) []string {
	hooksRel, inTree := r.Rel(r.HooksDir)
	var out []string
	for _, p := range paths {
		base := p[strings.LastIndex(p, "/")+1:]
		switch {
		case inTree && (p == hooksRel || strings.HasPrefix(p, hooksRel+"/")),
			strings.HasPrefix(p, ".husky/"),
			base == ".pre-commit-config.yaml" || base == ".pre-commit-hooks.yaml",
			base == "lefthook.yml" || base == ".lefthook.yml" || base == "lefthook-local.yml" || base == ".lefthook-local.yml":
			out = append(out, p)
		}
	}
	return out
}

// HasCommitHooks reports whether a hook `git commit` runs is installed.
func (r *Repo) HasCommitHooks() bool {
	return hookRunner{dir: r.HooksDir, enabled: true}.any()
}

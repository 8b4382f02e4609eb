package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
)

// The post-tool hook commits exactly what the batch changed, on its own:
//
//   - the files the edit tools changed (new files included), and the files
//     bash changed that were clean before the batch (worktreeSnapshot);
//     files bash changed that the user had already modified are left
//     alone and reported;
//   - when an edited file already had uncommitted changes of the user
//     before the agent's first edit in the batch (its content then differs
//     from HEAD), the user's version is committed first, in a commit of its
//     own ("loom: save your changes to …"), as aider does. That commit is
//     built in a temporary index (GIT_INDEX_FILE: HEAD's tree plus the
//     user's version of those files, hashed with the file's filters), so
//     that the user's other staged changes stay out of it; it is made with
//     `git commit`, so the user's hooks run for it too. The real index
//     entry of such a file is then moved to the user's version, unless the
//     user had staged something else in it;
//   - the agent's commit is a plain `git commit --only -- <files>`: the
//     user's hooks run, and the user's other staged, unstaged and untracked
//     changes are never swept in. A new file is first added with
//     intent-to-add (undone if the commit fails). When a hook fails,
//     nothing of the agent's change is committed: it stays in the worktree
//     and the failure is told to the user and the model.

// batchFile is what the hook knows of a file an edit tool changed in the
// current batch.
type batchFile struct {
	// before is the file's text before the batch's first edit of it (the
	// editor's buffer when it was open, else the disk).
	before string
	// created is set when the file did not exist before that edit.
	created bool
}

// hookResult is what the post-tool hook did.
type hookResult struct {
	action string
	failed bool
	commit *CommitNote
	// commits are the commits made, oldest first (the user's own changes,
	// then the agent's).
	commits []sessionCommit
	// unsaved lists agent edits the client could not save (not committed).
	unsaved []string
	// quiet marks a hook that found nothing to do and nothing to tell.
	quiet bool
}

// runHook runs the post-tool hook on a worker goroutine and reports
// PostToolsHookCompleted: it saves the touched documents, then commits
// exactly the files the batch changed.
func (s *Session) runHook(ctx context.Context, a fsm.RunPostToolsHook, batch map[string]*batchFile, snap *worktreeSnapshot, prompt string, cfg config.Config) {
	// A cancelled turn does not cut a commit short (that could leave the
	// repository locked); only the session's shutdown does.
	res := s.commitBatch(s.life, batch, snap, prompt, cfg)
	s.post(func() {
		s.commits = append(s.commits, res.commits...)
		if res.commit != nil {
			// Even for a cancelled turn: the commit exists, the user must
			// know (and loom.undo can take it back).
			s.lastCommit = res.commit.SHA
			s.notify(Notification{Kind: NoteCommit, Turn: a.Turn, Commit: res.commit, Text: res.action})
		}
		if ctx.Err() != nil {
			return
		}
		switch {
		case res.commit != nil:
		case res.failed:
			s.notify(Notification{Kind: NoteError, Turn: a.Turn, Text: res.action})
		case res.quiet:
		default:
			s.notify(Notification{Kind: NoteInfo, Turn: a.Turn, Text: res.action})
		}
		s.step(fsm.PostToolsHookCompleted{Turn: a.Turn, ActionTaken: res.action, Failed: res.failed})
	})
}

func (s *Session) commitBatch(ctx context.Context, batch map[string]*batchFile, snap *worktreeSnapshot, prompt string, cfg config.Config) hookResult {
	if !cfg.Hooks.AutoCommit {
		return hookResult{action: "auto-commit is off (hooks.auto_commit = false): changes left uncommitted"}
	}
	files, unsaved := s.saveDocuments(ctx, sortedKeys(batch))
	git := gitRunner{dir: s.folder, scrub: []string{cfg.Model.APIKeyEnv}}
	top, err := git.toplevel(ctx)
	if err != nil {
		return hookResult{action: "not a git repository: changes left uncommitted"}
	}
	git.dir = top
	var notes []string
	if len(unsaved) > 0 {
		notes = append(notes, "unsaved in the editor, so not committed: "+strings.Join(relPaths(top, unsaved), ", "))
	}
	rel := relPaths(top, files)
	if snap != nil {
		skip := map[string]bool{}
		for _, r := range relPaths(top, sortedKeys(batch)) {
			skip[r] = true
		}
		prefix := ""
		if p := relPaths(top, []string{s.folder})[0]; p != "." {
			prefix = p
		}
		byBash, leftDirty := takeSnapshot(ctx, git).changesSince(snap, prefix, skip)
		rel = append(rel, byBash...)
		if len(leftDirty) > 0 {
			notes = append(notes, "changed by a command but already modified by you before, so not committed: "+strings.Join(leftDirty, ", "))
		}
	}
	rel, ignored := splitIgnored(ctx, git, rel)
	if len(ignored) > 0 {
		notes = append(notes, "ignored by git, so not committed: "+strings.Join(ignored, ", "))
	}
	if len(rel) == 0 {
		// A batch whose commands changed nothing is not worth a word.
		quiet := len(notes) == 0 && len(unsaved) == 0
		return hookResult{action: joinNotes("no file to commit", notes), unsaved: unsaved, quiet: quiet}
	}
	sort.Strings(rel)

	var res hookResult
	userFiles := map[string]string{} // rel path -> user's version
	for _, f := range files {
		if b := batch[f]; b != nil && !b.created {
			userFiles[relPaths(top, []string{f})[0]] = b.before
		}
	}
	if uc, err := commitUserVersions(ctx, git, userFiles); err != nil {
		return hookResult{action: joinNotes("your earlier uncommitted changes to the edited files could not be committed apart, so nothing was committed; the changes stay in the worktree: "+err.Error(), notes), failed: true, unsaved: unsaved}
	} else if uc != nil {
		res.commits = append(res.commits, *uc)
		notes = append([]string{fmt.Sprintf("your earlier changes to %s were committed first as %s", strings.Join(uc.files, ", "), short(uc.sha))}, notes...)
	}

	msg := commitMessage(rel, prompt, cfg.Hooks.TrailerFor(cfg.Model.Name))
	parent := git.revParse(ctx, "HEAD")
	if err := commitOnly(ctx, git, rel, msg); err != nil {
		res.action = joinNotes("the auto-commit failed, the changes stay in the worktree uncommitted: "+err.Error(), notes)
		res.failed, res.unsaved = true, unsaved
		return res
	}
	sha := git.revParse(ctx, "HEAD")
	if sha == "" || sha == parent {
		res.action, res.failed = joinNotes("git commit succeeded but HEAD did not move", notes), true
		return res
	}
	res.commits = append(res.commits, sessionCommit{sha: sha, parent: parent, files: rel})
	subject, _, _ := strings.Cut(msg, "\n")
	res.action = joinNotes(fmt.Sprintf("committed %s: %s", short(sha), subject), notes)
	res.commit = &CommitNote{SHA: sha, Files: rel, Message: msg}
	res.unsaved = unsaved
	return res
}

// commitOnly commits exactly files (relative to the worktree root) with
// `git commit --only`, running the user's hooks. Untracked files are added
// with intent-to-add first, and removed from the index again if the
// commit fails.
func commitOnly(ctx context.Context, git gitRunner, files []string, msg string) error {
	out, err := git.run(ctx, "", append([]string{"ls-files", "-z", "--others", "--exclude-standard", "--"}, literal(files)...)...)
	if err != nil {
		return err
	}
	untracked := nulFields(out)
	if len(untracked) > 0 {
		if _, err := git.run(ctx, "", append([]string{"add", "--intent-to-add", "--"}, literal(untracked)...)...); err != nil {
			return err
		}
	}
	_, err = git.run(ctx, "", append([]string{"commit", "--quiet", "--only", "-m", msg, "--"}, literal(files)...)...)
	if err != nil && len(untracked) > 0 {
		if _, rerr := git.run(ctx, "", append([]string{"rm", "--cached", "--quiet", "--"}, literal(untracked)...)...); rerr != nil {
			err = fmt.Errorf("%w (and the new files could not be unstaged: %v)", err, rerr)
		}
	}
	return err
}

// commitUserVersions commits the user's version of the files in versions
// (relative path -> content) whose version differs from HEAD, in a commit
// of their own built in a temporary index. It returns nil when no file
// had user changes.
func commitUserVersions(ctx context.Context, git gitRunner, versions map[string]string) (*sessionCommit, error) {
	type entry struct{ path, mode, blob, oldIndex string }
	head := git.revParse(ctx, "HEAD")
	var entries []entry
	for _, path := range sortedKeys(versions) {
		blob, err := git.run(ctx, versions[path], "hash-object", "-w", "--stdin", "--path="+path)
		if err != nil {
			return nil, err
		}
		blob = strings.TrimSpace(blob)
		headBlob := ""
		if head != "" {
			headBlob = git.revParse(ctx, "HEAD:"+path)
		}
		if blob == headBlob {
			continue
		}
		mode := "100644"
		if st, err := os.Stat(filepath.Join(git.dir, filepath.FromSlash(path))); err == nil && st.Mode()&0o111 != 0 {
			mode = "100755"
		}
		// The real index entry, to tell whether the user staged something.
		idx, _ := git.run(ctx, "", "ls-files", "-s", "-z", "--", ":(literal)"+path)
		oldIndex := ""
		if f := strings.Fields(strings.TrimSuffix(idx, "\x00")); len(f) >= 2 {
			oldIndex = f[1]
		}
		entries = append(entries, entry{path, mode, blob, oldIndex})
	}
	if len(entries) == 0 {
		return nil, nil
	}
	tmp, err := os.CreateTemp("", "loom-index-")
	if err != nil {
		return nil, err
	}
	tmp.Close()
	os.Remove(tmp.Name()) // git wants to create it
	defer os.Remove(tmp.Name())
	tg := git.withEnv("GIT_INDEX_FILE=" + tmp.Name())
	if head != "" {
		if _, err := tg.run(ctx, "", "read-tree", head); err != nil {
			return nil, err
		}
	}
	var info strings.Builder
	var paths []string
	for _, e := range entries {
		fmt.Fprintf(&info, "%s %s\t%s\x00", e.mode, e.blob, e.path)
		paths = append(paths, e.path)
	}
	if _, err := tg.run(ctx, info.String(), "update-index", "--add", "-z", "--index-info"); err != nil {
		return nil, err
	}
	msg := "loom: save your changes to " + strings.Join(paths, ", ") + " before the agent's edit\n\nThese are your uncommitted changes, committed apart so that the agent's\nnext commit holds its own change only.\n"
	if _, err := tg.run(ctx, "", "commit", "--quiet", "-m", msg); err != nil {
		return nil, err
	}
	sha := git.revParse(ctx, "HEAD")
	// Bring the real index along where the user had not staged anything
	// else, so that it does not show the user's change as reverted.
	var fix strings.Builder
	for _, e := range entries {
		headBlob := ""
		if head != "" {
			headBlob = git.revParse(ctx, head+":"+e.path)
		}
		if e.oldIndex == headBlob {
			fmt.Fprintf(&fix, "%s %s\t%s\x00", e.mode, e.blob, e.path)
		}
	}
	if fix.Len() > 0 {
		if _, err := git.run(ctx, fix.String(), "update-index", "--add", "-z", "--index-info"); err != nil {
			return nil, fmt.Errorf("committed your changes as %s, but updating the index failed: %w", short(sha), err)
		}
	}
	return &sessionCommit{sha: sha, parent: head, files: paths, user: true}, nil
}

// splitIgnored separates the files git ignores (never committed).
func splitIgnored(ctx context.Context, git gitRunner, files []string) (kept, ignored []string) {
	if len(files) == 0 {
		return nil, nil
	}
	out, _ := git.run(ctx, "", append([]string{"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--"}, literal(files)...)...)
	isIgnored := map[string]bool{}
	for _, f := range nulFields(out) {
		isIgnored[f] = true
	}
	for _, f := range files {
		if isIgnored[f] {
			ignored = append(ignored, f)
		} else {
			kept = append(kept, f)
		}
	}
	return kept, ignored
}

// literal turns paths into pathspecs that match exactly those paths.
func literal(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = ":(literal)" + p
	}
	return out
}

func joinNotes(action string, notes []string) string {
	if len(notes) == 0 {
		return action
	}
	return action + "; " + strings.Join(notes, "; ")
}

// saveDocuments asks the editor to save the files open in it, and splits
// files into those on disk and those the editor could not save.
func (s *Session) saveDocuments(ctx context.Context, files []string) (onDisk, unsaved []string) {
	var open []string
	for _, f := range files {
		if _, _, ok := s.host.overlay.Document(f); ok {
			open = append(open, f)
		} else {
			onDisk = append(onDisk, f)
		}
	}
	if len(open) == 0 {
		return onDisk, nil
	}
	saved, err := s.host.opts.Editor.SaveDocuments(ctx, open)
	if err != nil && !errors.Is(err, ErrUnsupported) {
		s.log.Warn("saving documents failed", "err", err)
	}
	isSaved := map[string]bool{}
	for _, p := range saved {
		isSaved[filepath.Clean(p)] = true
	}
	for _, f := range open {
		if isSaved[f] {
			onDisk = append(onDisk, f)
		} else {
			unsaved = append(unsaved, f)
		}
	}
	return onDisk, unsaved
}

// commitMessage summarises a change: the files, and the first line of the
// user's request, with the attribution trailer.
func commitMessage(files []string, prompt, trailer string) string {
	subject := "loom: edit " + strings.Join(files, ", ")
	if len(subject) > 72 {
		subject = fmt.Sprintf("loom: edit %s and %d more", files[0], len(files)-1)
	}
	var b strings.Builder
	b.WriteString(subject)
	request, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	if request != "" {
		if len(request) > 200 {
			request = request[:200] + "…"
		}
		b.WriteString("\n\nRequested: " + request)
	}
	if len(files) > 1 {
		b.WriteString("\n\nFiles:\n")
		for _, f := range files {
			b.WriteString("- " + f + "\n")
		}
	}
	if trailer != "" {
		b.WriteString("\n\n" + trailer)
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func relPaths(top string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		if r, err := filepath.Rel(top, p); err == nil {
			out[i] = filepath.ToSlash(r)
		} else {
			out[i] = p
		}
	}
	return out
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

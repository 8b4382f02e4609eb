package workspace

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// hookResult is what the post-tool hook did.
type hookResult struct {
	action string
	failed bool
	commit *CommitNote
	// unsaved lists agent edits the client could not save (not committed).
	unsaved []string
}

// runHook runs the post-tool hook on a worker goroutine and reports
// PostToolsHookCompleted: it saves the touched documents, then commits
// exactly the files the batch changed.
func (s *Session) runHook(ctx context.Context, a fsm.RunPostToolsHook, files []string, prompt string) {
	// A cancelled turn does not cut a commit short (that could leave the
	// repository locked); only the session's shutdown does.
	res := s.commitBatch(s.life, a, files, prompt)
	if ctx.Err() != nil {
		return
	}
	s.post(func() {
		switch {
		case res.commit != nil:
			s.lastCommit = res.commit.SHA
			s.notify(Notification{Kind: NoteCommit, Turn: a.Turn, Commit: res.commit})
		case res.failed:
			s.notify(Notification{Kind: NoteError, Turn: a.Turn, Text: res.action})
		default:
			s.notify(Notification{Kind: NoteInfo, Turn: a.Turn, Text: res.action})
		}
		s.step(fsm.PostToolsHookCompleted{Turn: a.Turn, ActionTaken: res.action, Failed: res.failed})
	})
}

func (s *Session) commitBatch(ctx context.Context, a fsm.RunPostToolsHook, files []string, prompt string) hookResult {
	if !s.cfg.Hooks.AutoCommit {
		return hookResult{action: "auto-commit is off (hooks.auto_commit = false): changes left uncommitted"}
	}
	if len(files) == 0 {
		return hookResult{action: "no file changed: nothing to commit"}
	}
	files, unsaved := s.saveDocuments(ctx, files)
	git := gitRunner{dir: s.folder, scrub: []string{s.cfg.Model.APIKeyEnv}}
	top, err := git.run(ctx, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return hookResult{action: "not a git repository: changes left uncommitted"}
	}
	top = strings.TrimSpace(top)
	if len(files) == 0 {
		return hookResult{action: "unsaved in the editor, so not committed: " + strings.Join(relPaths(top, unsaved), ", "), unsaved: unsaved}
	}
	rel := relPaths(top, files)
	git.dir = top
	if _, err := git.run(ctx, "", append([]string{"add", "--"}, rel...)...); err != nil {
		return hookResult{action: "git add failed: " + err.Error(), failed: true}
	}
	msg := commitMessage(rel, prompt, s.cfg.Hooks.TrailerFor(s.cfg.Model.Name))
	if _, err := git.run(ctx, "", append([]string{"commit", "--quiet", "-m", msg, "--"}, rel...)...); err != nil {
		return hookResult{action: "the auto-commit failed, the changes stay in the worktree uncommitted: " + err.Error(), failed: true}
	}
	sha, err := git.run(ctx, "", "rev-parse", "HEAD")
	if err != nil {
		return hookResult{action: "committed, but could not read HEAD: " + err.Error(), failed: true}
	}
	sha = strings.TrimSpace(sha)
	subject, _, _ := strings.Cut(msg, "\n")
	action := fmt.Sprintf("committed %s: %s", short(sha), subject)
	if len(unsaved) > 0 {
		action += "; unsaved in the editor, so not committed: " + strings.Join(relPaths(top, unsaved), ", ")
	}
	return hookResult{action: action, commit: &CommitNote{SHA: sha, Files: rel, Message: msg}, unsaved: unsaved}
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

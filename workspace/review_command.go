package workspace

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/review"
)

// Under tools.edits = "review" a command's changes join the review list
// (fsm.ChangesProposed, kind command): after a bash call, the text files
// it changed are proposed with their hunks (the command's bytes only,
// from the files as they were just before it), and the call waits for
// the decision like an edit's. The command already wrote them, so the
// decision is keep or discard: accepted hunks stay and are committed by
// the post-tool hook like an edit's (only those bytes); rejected hunks
// are taken back off the disk, by a three-way merge that keeps what the
// user typed since. The model reads the command's output, then the
// decision. Files that cannot be hunked (binary, too large, deleted),
// every command under tools.edits = "auto", and the proposed files of a
// turn cancelled before the decision are reported as before
// (loom/commandChanges: keep with loom.commit, discard with loom.discard).

// commandReview is a proposal of a command's changes.
type commandReview struct {
	command string
	output  string
	files   []*commandFile
	// changes are the files' reports, for the keep/discard list when
	// the turn is cancelled before the decision.
	changes []CommandChange
}

// commandFile is one file of a commandReview.
type commandFile = changes.CommandFile

// commandProposal works out the review of what run changed (on the
// tool's worker): nil when nothing can be reviewed. The other files of
// run stay in it, for the hook's report.
func (s *Conversation) commandProposal(ctx context.Context, b *batchRun, run *commandRun, output string) *commandReview {
	if run == nil || len(run.paths) == 0 {
		return nil
	}
	repo, err := gitcommit.Open(ctx, s.folder.dir, b.env.ScrubEnv...)
	if err != nil {
		return nil
	}
	cfg := s.changes.Config(ctx)
	changes, _ := s.reportCommands(ctx, repo, hookJob{Job: changes.Job{Cfg: cfg}, cmds: []commandRun{*run}}, b.turn)
	cr := &commandReview{command: run.command, output: output}
	next := 1
	for _, c := range changes {
		if c.Binary || c.Before == nil || c.After == nil || !c.After.Present {
			continue
		}
		ch := review.Split(c.Rel, c.Before.Text, c.After.Text, !c.Before.Present, next)
		if len(ch.File.Hunks) == 0 {
			continue
		}
		ch.File.Kind = fsm.ChangeCommand
		next += len(ch.File.Hunks)
		mode := fs.FileMode(0o644)
		if st, err := os.Lstat(c.Path); err == nil {
			mode = st.Mode().Perm()
		}
		cr.files = append(cr.files, &commandFile{Abs: c.Path, Rel: c.Rel, Before: *c.Before, After: *c.After, Change: ch, Mode: mode})
		cr.changes = append(cr.changes, c)
	}
	if len(cr.files) == 0 {
		return nil
	}
	return cr
}

// proposeCommand steps ChangesProposed for cr (on the owner goroutine)
// and returns the proposal, or nil when the machine did not take it. The
// proposed files leave run, so that the hook does not report them again.
func (s *Conversation) proposeCommand(turn uint64, callID string, run *commandRun, cr *commandReview) *proposal {
	p := &proposal{callID: callID, cmd: cr, settled: make(chan struct{}), outcome: make(chan reviewOutcome, 1)}
	var changes []fsm.FileChange
	proposed := map[string]bool{}
	for _, f := range cr.files {
		changes = append(changes, f.Change.File)
		proposed[f.Abs] = true
	}
	s.proposed[callID] = p
	if _, err := s.step(fsm.ChangesProposed{Turn: turn, CallID: callID, Changes: changes, Output: cr.output}); err != nil {
		// Not reviewable after all: the command completes as under auto.
		delete(s.proposed, callID)
		s.git.cmds = append(s.git.cmds, *run)
		s.outputs[callID] = toolOutput{text: cr.output}
		s.step(fsm.ToolCompleted{Turn: turn, CallID: callID, Result: cr.output})
		return nil
	}
	rest := *run
	rest.paths = slices.DeleteFunc(slices.Clone(run.paths), func(p string) bool { return proposed[p] })
	s.git.cmds = append(s.git.cmds, rest)
	return p
}

// commandNoteFiles returns cr's files for a ProposalNote.
func (cr *commandReview) noteFiles() (changes []fsm.FileChange, abs, olds, news []string) {
	for _, f := range cr.files {
		changes = append(changes, f.Change.File)
		abs = append(abs, f.Abs)
		olds = append(olds, f.Before.Text)
		news = append(news, f.After.Text)
	}
	return
}

// hunkIDs are every hunk of p, in order.
func (p *proposal) hunkIDs() []string {
	if p.cmd == nil {
		return p.change.HunkIDs()
	}
	var ids []string
	for _, f := range p.cmd.files {
		ids = append(ids, f.Change.HunkIDs()...)
	}
	return ids
}

// commandWords names a command for the review's title.
func commandWords(cmd string) string {
	return "`" + changes.CutRunes(strings.TrimSpace(cmd), 80) + "`"
}

// applyCommand performs an fsm.ApplyChanges of a command's changes (on
// a worker), then completes the call on the owner goroutine.
func (s *Conversation) applyCommand(ctx context.Context, a fsm.ApplyChanges, p *proposal, call fsm.ToolCall) {
	res, keep, err := s.changes.DecideCommand(ctx, p.cmd.files, a.Accepted, s.reads)
	result, isError := a.Result, false
	if err != nil {
		result, isError = p.cmd.output+"\n[loom] the user's decision on this command's changes could not be applied: "+err.Error(), true
	} else if len(res.Conflicts) > 0 {
		result += fmt.Sprintf(" Hunks %v could not be taken back: the user changed the same lines since; they stay as they are.", res.Conflicts)
	}
	// The command ran whatever the user decided of its changes: its
	// PostToolUse hooks run now, with the output and the decision.
	postHooks := s.postToolHooks(ctx, call, toolOutcome{result: result, isError: isError})
	s.post(func() {
		if ctx.Err() != nil {
			close(p.settled)
			p.outcome <- reviewOutcome{res: res, err: fmt.Errorf("the turn was cancelled while the decision was applied")}
			return
		}
		if len(postHooks) > 0 {
			s.step(fsm.HooksDecided{Turn: a.Turn, Event: fsm.HookPostToolUse, CallID: a.CallID, Hooks: postHooks})
		}
		for _, k := range keep {
			s.git.recordEdit(k.Path, k.Before, k.After, k.Created, k.Mode)
		}
		s.outputs[a.CallID] = toolOutput{text: result}
		s.step(fsm.ToolCompleted{Turn: a.Turn, CallID: a.CallID, Result: result, IsError: isError})
		close(p.settled)
		for _, id := range p.hunkIDs() {
			if !slices.Contains(a.Accepted, id) {
				res.Rejected = append(res.Rejected, id)
			}
		}
		if res.Applied == nil {
			res.Applied = []string{}
		}
		if res.Rejected == nil {
			res.Rejected = []string{}
		}
		p.outcome <- reviewOutcome{res: res, err: err}
	})
}

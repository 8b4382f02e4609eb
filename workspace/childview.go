package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/secret"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// ErrNoSubagent is StopSubagent's error when no child of that id runs.
var ErrNoSubagent = errors.New("no such subagent runs")

// StopSubagent stops the running descendant child and only it: a child
// of this conversation named by its id among its parent's children
// (SubagentInfo.Child) or by its conversation id, else, the same way, a
// child of one of its running children, at any depth. Its parent's turn
// goes on, and the parent's model reads that the user stopped the
// child, with what it had (fsm.ChildStopAsked).
func (s *Conversation) StopSubagent(ctx context.Context, child string) error {
	return s.StopSubagentOf(ctx, "", child)
}

// StopSubagentOf is StopSubagent of the descendant whose conversation
// id is of ("": any): a grandchild's id may repeat under two children,
// its parent's conversation id tells them apart.
func (s *Conversation) StopSubagentOf(ctx context.Context, of, child string) error {
	var stepErr error
	var found bool
	var kids []*Conversation
	err := s.loop.call(ctx, func() {
		mine := of == "" || of == s.ID()
		for _, c := range s.children.running {
			if l := c.children.up; mine && (l.id == child || l.conv == child) {
				found = true
				_, stepErr = s.step(fsm.ChildStopAsked{Turn: l.turn, CallID: l.callID})
				return
			}
			kids = append(kids, c)
		}
	})
	switch {
	case err != nil:
		return err
	case found:
		return stepErr
	}
	// Off the owner goroutine: each child's loop is asked in turn.
	for _, c := range kids {
		err := c.StopSubagentOf(ctx, of, child)
		if err == nil || !errors.Is(err, ErrNoSubagent) && !errors.Is(err, ErrClosed) {
			return err
		}
	}
	return fmt.Errorf("%w: %q", ErrNoSubagent, child)
}

// ChildView is one child of a conversation as a client redraws it:
// Info as its last NoteSubagent said (State running, completed, failed
// or cancelled; Usage its tokens), and its transcript.
type ChildView struct {
	Info     SubagentInfo
	Messages []fsm.Message
}

// Children lists the children the conversation started (from its
// journal and since), oldest first, each with its state and transcript:
// a running child's as it is now, an ended one's from its own journal
// (none when it is not journaled).
func (s *Conversation) Children(ctx context.Context) ([]ChildView, error) {
	var log []journal.ChildRecord
	live := map[string]*Conversation{}
	var parent, path string
	var cfg fsm.Config
	err := s.loop.call(ctx, func() {
		log = append(log, s.children.log...)
		for _, c := range s.children.running {
			live[c.children.up.id] = c
		}
		parent, path, cfg = s.ID(), s.ident.journal(), s.machineConfig()
	})
	if err != nil {
		return nil, err
	}
	out := make([]ChildView, 0, len(log))
	for _, r := range log {
		a := r.Start
		c := live[a.Child]
		v := ChildView{Info: SubagentInfo{Parent: parent, CallID: a.CallID, Turn: a.Turn, Child: a.Child, Agent: a.Agent, Task: a.Task,
			Depth: a.Depth, ReadOnly: a.ReadOnly, Model: r.Model, State: r.State(c != nil)}}
		if r.Tokens > 0 {
			v.Info.Usage = &fsm.Usage{TotalTokens: r.Tokens}
		}
		if c != nil {
			v.Info.Conversation = c.ID()
			if t := c.children.up.tokens.Load(); t > 0 {
				v.Info.Usage = &fsm.Usage{TotalTokens: t}
			}
			if p := c.children.up.activity.Load(); p != nil {
				v.Info.Activity = *p
			}
			if msgs, err := c.History(ctx); err == nil {
				v.Messages = msgs
			}
		} else if path != "" {
			v.Info.Conversation, v.Messages = endedChild(ChildJournal(path, a.Child), cfg, s.folder.host.redactor)
		}
		out = append(out, v)
	}
	return out, nil
}

// endedChild reads an ended child's conversation id and transcript
// (redacted by r) from its journal at path; none when it cannot be read.
func endedChild(path string, cfg fsm.Config, r *secret.Redactor) (id string, msgs []fsm.Message) {
	rp, err := journal.ReplayUnsealed(path, cfg, r)
	if err != nil {
		return "", nil
	}
	id = journal.ID(rp.Scan.Header.Folder, rp.Scan.Header.Created)
	return id, redactMessages(r, rp.M.Messages())
}

package journal

import "github.com/loom-lsp/loom-lsp/fsm"

// ChildRecord is a subagent a conversation started (fsm.StartChild) and
// how it ended, as its parent's journal tells it: what a client redraws
// of the children after a restart.
type ChildRecord struct {
	Start fsm.StartChild
	// Ended is set once its fsm.ChildFinished was stepped; Failed and
	// Tokens are that event's.
	Ended, Failed bool
	Tokens        int64
	// Stopped is why the machine stopped it (fsm.StopChild), "" if it
	// did not.
	Stopped string
	// Model is the model its definition chose ("" for the
	// conversation's); only known while the daemon that started it runs.
	Model string
}

// State is the child's state word (SubagentInfo's): running (not ended;
// live tells whether the daemon still runs it), completed, failed,
// cancelled (stopped by a cap or the user, or its parent's turn was
// cancelled, or the daemon died while it ran).
func (r ChildRecord) State(live bool) string {
	switch {
	case !r.Ended && live:
		return "running"
	case !r.Ended || r.Stopped != "":
		return "cancelled"
	case r.Failed:
		return "failed"
	}
	return "completed"
}

// Spawned adds to log what stepping ev (which gave acts) says of the
// conversation's children: a child started, stopped or finished.
func Spawned(log []ChildRecord, ev fsm.Event, acts []fsm.Action) []ChildRecord {
	find := func(turn uint64, callID string) *ChildRecord {
		for i := len(log) - 1; i >= 0; i-- {
			if s := log[i].Start; s.Turn == turn && s.CallID == callID {
				return &log[i]
			}
		}
		return nil
	}
	for _, a := range acts {
		switch a := a.(type) {
		case fsm.StartChild:
			log = append(log, ChildRecord{Start: a})
		case fsm.StopChild:
			if r := find(a.Turn, a.CallID); r != nil && r.Stopped == "" {
				r.Stopped = a.Reason
			}
		}
	}
	if e, ok := ev.(fsm.ChildFinished); ok {
		if r := find(e.Turn, e.CallID); r != nil && !r.Ended {
			r.Ended, r.Failed, r.Tokens = true, e.Failed, e.Usage.TotalTokens
		}
	}
	return log
}

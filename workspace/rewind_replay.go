package workspace

import (
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// commitLog rebuilds, while a journal is replayed, the auto-commits the
// conversation made and their turns, so that a rewind after a restart
// takes them back too. Files rewinds in the journal take commits out;
// their redos put them back.
type commitLog struct {
	commits []*gitcommit.Result
	turnOf  map[string]uint64
	// rewound is the stack of commits taken out by rewinds not redone.
	rewound [][]*gitcommit.Result
}

// made records the commit of plan rec, made as sha in turn.
func (l *commitLog) made(rec *commitRecord, sha string, turn uint64) {
	if rec == nil || rec.Plan == nil {
		return
	}
	p := rec.Plan
	res := &gitcommit.Result{SHA: sha, Parent: p.Parent, Files: p.Files(), Message: p.Message, Entries: p.Entries}
	l.commits = append(l.commits, res)
	if l.turnOf == nil {
		l.turnOf = map[string]uint64{}
	}
	l.turnOf[sha] = turn
}

// stepped follows an event the machine took.
func (l *commitLog) stepped(ev fsm.Event) {
	switch e := ev.(type) {
	case fsm.Rewind:
		var taken []*gitcommit.Result
		if e.Restore == fsm.RestoreFiles || e.Restore == fsm.RestoreBoth {
			kept := l.commits[:0:0]
			for _, c := range l.commits {
				if l.turnOf[c.SHA] >= e.Turn {
					taken = append(taken, c)
				} else {
					kept = append(kept, c)
				}
			}
			l.commits = kept
		}
		l.rewound = append(l.rewound, taken)
	case fsm.Redo:
		if n := len(l.rewound); n > 0 {
			l.commits = append(l.commits, l.rewound[n-1]...)
			l.rewound = l.rewound[:n-1]
		}
	case fsm.UserInput:
		l.rewound = nil
	}
}

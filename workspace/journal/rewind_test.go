package journal

import (
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// A files rewind journals its fsm.Rewind with its restores: a replay
// that finds the restores and not the event holds it as PendingRewind
// (with the files its restores' end left), and holds nothing once the
// event follows or the revert failed (an end without the rewind).
func TestReplayHoldsARewindItsEventNeverFollowed(t *testing.T) {
	rw := &fsm.Rewind{Turn: 1, Restore: fsm.RestoreBoth}
	ended := &fsm.Rewind{Turn: 1, Restore: fsm.RestoreBoth, Left: []string{"a.txt"}}
	restore := Record{Type: "restore", Restore: &RestoreRecord{Top: "/r", What: "the rewind to turn 1", Head: "abc", Rewind: rw}}
	for _, tc := range []struct {
		name string
		recs []Record
		want *fsm.Rewind
	}{
		{"cut before the restores' end", []Record{restore}, rw},
		{"cut after the restores' end", []Record{restore, {Type: "restore-end", Restore: &RestoreRecord{Rewind: ended}}}, ended},
		{"the revert failed", []Record{restore, {Type: "restore-end"}}, nil},
		{"an undo's restores", []Record{{Type: "restore", Restore: &RestoreRecord{Top: "/r", What: "the undo"}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := replayRecords(t, tc.recs)
			switch {
			case tc.want == nil && rp.PendingRewind != nil:
				t.Fatalf("pending rewind %+v, want none", rp.PendingRewind.Rewind)
			case tc.want != nil && (rp.PendingRewind == nil || rp.PendingRewind.Head != "abc" || len(rp.PendingRewind.Rewind.Left) != len(tc.want.Left)):
				t.Fatalf("pending rewind %+v, want %+v of HEAD abc", rp.PendingRewind, tc.want)
			}
		})
	}
}

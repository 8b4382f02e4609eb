package journal

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// TestReplayCommits: a commit planned in turn 1 and made is recorded with
// its turn; one that failed records nothing; one planned and never ended
// is pending; the events count as steps.
func TestReplayCommits(t *testing.T) {
	plan := &CommitRecord{Plan: &gitcommit.Plan{Top: "/r", Message: "edit a.txt", Entries: []gitcommit.Entry{{Path: "a.txt"}}}}
	rp := replayRecords(t, []Record{
		{Type: "commit", Commit: plan}, {Type: "commit-end", Commit: &CommitRecord{SHA: "s1"}},
		{Type: "commit", Commit: plan}, {Type: "commit-end", Commit: &CommitRecord{Error: "boom"}},
		{Type: "commit", Commit: plan},
	})
	if len(rp.Commits.Commits) != 1 || rp.Commits.Commits[0].SHA != "s1" || rp.Commits.TurnOf["s1"] != 1 {
		t.Errorf("commits %+v, turns %v; want s1 made in turn 1", rp.Commits.Commits, rp.Commits.TurnOf)
	}
	if rp.PendingCommit == nil || rp.PendingCommit.Plan == nil || rp.PendingCommit.Plan.Message != "edit a.txt" {
		t.Errorf("pending commit %+v, want the last plan", rp.PendingCommit)
	}
	if rp.Steps != 1 || len(rp.Rejected) != 0 {
		t.Errorf("%d steps, rejected %q; want 1, none", rp.Steps, rp.Rejected)
	}
}

// replayRecords replays a journal of a user's input "hi" followed by
// recs.
func replayRecords(t *testing.T, recs []Record) Replayed {
	t.Helper()
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := Create(path, "/r", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := j.AppendEvent(fsm.UserInput{Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := j.WriteLine(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	rp, err := Replay(path, fsm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

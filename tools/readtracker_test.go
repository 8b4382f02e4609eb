package tools

import "testing"

// TestReadTrackerSawDiffersFresh: what the watcher saw is held against
// what the model read, without reading the file again.
func TestReadTrackerSawDiffersFresh(t *testing.T) {
	var tr ReadTracker
	old, changed := SumOf([]byte("old\n")), SumOf([]byte("new\n"))
	if tr.Saw("/w/never", changed) || tr.Differs("/w/never", changed) || tr.Fresh("/w/never") {
		t.Fatal("a file never read is news or fresh")
	}
	tr.Record("/w/a", []byte("old\n"))
	if !tr.Fresh("/w/a") {
		t.Fatal("a file just read is not fresh")
	}
	if tr.Saw("/w/a", old) || !tr.Fresh("/w/a") {
		t.Fatal("the watcher's sight of what was read made it stale")
	}
	if !tr.Saw("/w/a", changed) || !tr.Differs("/w/a", changed) || tr.Fresh("/w/a") {
		t.Fatal("a change the watcher saw is no news, or the read still fresh")
	}
	// The model reads the new text before the note is stepped: no news.
	tr.Record("/w/a", []byte("new\n"))
	if tr.Differs("/w/a", changed) || !tr.Fresh("/w/a") {
		t.Fatal("a read of the text the watcher saw left it stale")
	}
	// The watcher sees another text, then the one read again (the user
	// undid): fresh again.
	if !tr.Saw("/w/a", old) || tr.Saw("/w/a", changed) || !tr.Fresh("/w/a") {
		t.Fatal("what was read, seen again, is stale")
	}
	// MarkStale (no content) makes a read not fresh too; Check of what
	// was read clears it.
	tr.MarkStale("/w/a")
	if tr.Fresh("/w/a") {
		t.Fatal("a read marked stale is fresh")
	}
	if err := tr.Check("/w/a", []byte("new\n")); err != nil || !tr.Fresh("/w/a") {
		t.Fatalf("Check of what was read: %v, fresh %v", err, tr.Fresh("/w/a"))
	}
}

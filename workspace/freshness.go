package workspace

import (
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
)

// freshness decides, for one conversation, which changed files are news
// to its model: what the model read (reads) against what the watcher saw,
// leaving out the echoes of the conversation's own writes (writes). It
// knows the folder only by its directory.
type freshness struct {
	dir    string
	writes *ownWrites
	reads  *tools.ReadTracker
}

// stillStale are the files whose content as seen is not what the model
// last read of them (nor loom's own write). mark (on the watcher's
// goroutine) tells the read tracker what was seen; without it the
// tracker is only asked, again, before the note is stepped.
func (fr freshness) stillStale(files []seen, mark bool) []seen {
	var stale []seen
	for _, f := range files {
		if fr.writes.isSum(f.path, f.sum) {
			continue // the echo of our own write
		}
		differs := fr.reads.Differs
		if mark {
			differs = fr.reads.Saw
		}
		if differs(f.path, f.sum) {
			stale = append(stale, f)
		}
	}
	return stale
}

// freshlyRead names the file a successful read_file call gave the
// model when what the call read still stands (no change the watcher saw
// since differs from it; the tracker knows, the file is not read again):
// a note that it changed, pending in the machine, is then dropped
// (fsm.ToolCompleted.Read).
func (fr freshness) freshlyRead(c fsm.ToolCall, isError bool) []string {
	if c.Name != "read_file" || isError {
		return nil
	}
	rel := callPath(c.Arguments)
	if rel == "" {
		return nil
	}
	abs, err := tools.Resolve(fr.dir, rel)
	if err != nil || !fr.reads.Fresh(abs) {
		return nil
	}
	return []string{relTo(fr.dir, abs)}
}

package workspace

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
)

// A command's changes are the command's bytes only: discarding them (and
// deciding them in review) must leave the user's own edits to the same
// file, made before the command ran, where they are. So just before a
// command runs, loom keeps the text of every file that may differ from
// HEAD: those git reported dirty when the folder's first command ran
// (one git status, once per folder) and those the watcher has seen change
// since. A file in neither is as HEAD has it. The cost is the user's
// changed files, not the repository's size.
//
// The limits: a file over maxPreImage, or past maxTouched files, has no
// kept text; its discard falls back to HEAD's version, as before. A
// change made a few milliseconds before the command might not have
// reached the watcher yet: a fence (as at the window's close) waits for
// it.

const (
	// maxPreImage bounds the text kept of one file.
	maxPreImage = 1 << 20
	// maxTouched bounds the files whose text is kept.
	maxTouched = 4096
)

// preImage is a file as it was just before a command ran.
type preImage struct {
	text    string
	present bool
}

// touch records a path the watcher saw change (cw.mu held).
func (cw *commandWindows) touchLocked(path string) {
	if cw.touched == nil {
		cw.touched = map[string]bool{}
	}
	if len(cw.touched) < maxTouched {
		cw.touched[path] = true
	}
}

// preImages returns the texts, as they are now, of the files that may
// differ from HEAD (see above); seed lists the files git reports dirty,
// and is called once per folder.
func (cw *commandWindows) preImages(seed func() []string) map[string]preImage {
	cw.mu.Lock()
	seeded := cw.seeded
	cw.seeded = true
	cw.mu.Unlock()
	var dirty []string
	if !seeded && seed != nil {
		dirty = seed()
	}
	cw.fence() // every change made so far has reached touched
	cw.mu.Lock()
	for _, p := range dirty {
		cw.touchLocked(p)
	}
	paths := make([]string, 0, len(cw.touched))
	for p := range cw.touched {
		paths = append(paths, p)
	}
	cw.mu.Unlock()
	out := make(map[string]preImage, len(paths))
	for _, p := range paths {
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out[p] = preImage{}
		case err != nil || !st.Mode().IsRegular() || st.Size() > maxPreImage:
			// Unknown: left out.
		default:
			b, err := os.ReadFile(p)
			if err == nil && len(b) <= maxPreImage {
				out[p] = preImage{text: string(b), present: true}
			}
		}
	}
	return out
}

// isBinary reports whether text looks binary (a NUL in its first 8000
// bytes, as git decides).
func isBinary(text string) bool {
	return bytes.IndexByte([]byte(text[:min(len(text), 8000)]), 0) >= 0
}

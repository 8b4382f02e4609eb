package workspace

import (
	"context"
	"strings"
)

// SetReadRoots sets the folders outside the workspace that the
// conversation's read tools may read (ACP additionalDirectories): each
// an absolute path of a directory, checked by tools.CheckReadRoots
// (nothing the sandbox hides); the error names the first refused one and
// nothing changes. The list replaces the previous one (nil clears it);
// the model is told of it in the system prompt. It returns the roots as
// granted: symlinks resolved, the workspace's own folders and repeats
// left out. Nothing is ever written in them.
func (c Controls) SetReadRoots(ctx context.Context, dirs []string) ([]string, error) {
	var roots []string
	var err error
	callErr := c.do(ctx, func() { roots, err = c.useRoots(dirs) })
	if callErr != nil {
		return nil, callErr
	}
	return roots, err
}

// readRootsNote tells the model of the read roots, for the system
// prompt; "" when there are none.
func readRootsNote(roots []string) string {
	if len(roots) == 0 {
		return ""
	}
	return "\n\nBesides the workspace, you may read these folders with read_file, list_files and grep, by absolute path " +
		"(they are read-only: nothing can be edited or written there):\n- " + strings.Join(roots, "\n- ")
}

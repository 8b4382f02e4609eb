package workspace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/loom-lsp/loom-lsp/tools"
)

// readsOneFile names the tools that read the one file their call names:
// they read through the editor's DocumentStore when it has one. grep,
// which reads every file of the workspace, keeps reading the overlay and
// the disk (one client request per file would be far too slow).
var readsOneFile = map[string]bool{"read_file": true, "edit_file": true, "write_file": true}

// documentSource returns where a tool call reads files: base (the
// overlay, then the disk), with the editor's DocumentStore in between
// when the Editor has one. ctx is the call's context, callID the call.
func (r callRun) documentSource(ctx context.Context, callID string, base tools.FileSource) tools.FileSource {
	s := r.s
	store, ok := s.folder.host.opts.Editor.(DocumentStore)
	if !ok {
		return base
	}
	if base == nil {
		base = tools.DiskFiles{}
	}
	return storeFiles{ctx: ctx, store: store, by: s.caller(callID), overlay: s.folder.host.overlay, base: base, log: s.folder.log}
}

// storeFiles is a tools.FileSource reading a file open in the overlay
// from there, else through the editor's DocumentStore, else from base.
type storeFiles struct {
	ctx     context.Context
	store   DocumentStore
	by      DocumentCaller
	overlay *Overlay
	base    tools.FileSource
	log     *slog.Logger
}

// ReadFile implements tools.FileSource. A file missing on disk is missing
// (the client is not asked); a client that cannot read (it did not
// advertise fs/read_text_file) leaves the reading to base; a client that
// refuses, or fails to, has answered: the tool reports it, and the disk
// is not read in its place (acpx --deny-all's "no" is final).
func (f storeFiles) ReadFile(absPath string) ([]byte, error) {
	if _, _, open := f.overlay.Document(absPath); open {
		return f.base.ReadFile(absPath)
	}
	st, err := os.Stat(absPath)
	if err != nil || !st.Mode().IsRegular() {
		return f.base.ReadFile(absPath)
	}
	text, err := f.store.ReadDocument(f.ctx, f.by, absPath)
	switch {
	case err == nil:
		return []byte(text), nil
	case errors.Is(err, ErrUnsupported):
	case f.ctx.Err() != nil:
		return nil, f.ctx.Err()
	default:
		return nil, fmt.Errorf("the editor refused to read %s: %w", absPath, err)
	}
	return f.base.ReadFile(absPath)
}

// caller names tool call callID of this conversation to the editor's
// DocumentStore. It may run on any goroutine.
func (s *Conversation) caller(callID string) DocumentCaller {
	return DocumentCaller{Folder: s.folder.dir, Conversation: s.ID(), CallID: callID}
}

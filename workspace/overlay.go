package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/loom-lsp/loom-lsp/internal/lsppos"
	"github.com/loom-lsp/loom-lsp/tools"
)

// Overlay holds the documents open in the editor, as the user sees them,
// unsaved text included. Tools read through it (it is a tools.FileSource),
// so they see the editor's text when a file is open and the disk
// otherwise. It is safe for concurrent use.
type Overlay struct {
	mu      sync.Mutex
	docs    map[string]*document
	changed *sync.Cond // broadcast on every change, for WaitVersion
	// seq counts the editor's reports of a document (open, change,
	// save); touched holds each document's last.
	seq     uint64
	touched map[string]uint64
}

type document struct {
	text    string
	version int32
	// uri is the URI the client opened the document under ("" when not
	// opened by a client). Everything sent back to the client about the
	// document uses it, even when the folder is reached through a symlink.
	uri string
}

// Change is one content change of a didChange notification. A nil Range
// replaces the whole text.
type Change = lsppos.Change

// NewOverlay returns an empty overlay.
func NewOverlay() *Overlay {
	o := &Overlay{docs: map[string]*document{}, touched: map[string]uint64{}}
	o.changed = sync.NewCond(&o.mu)
	return o
}

func overlayKey(path string) string {
	path = filepath.Clean(path)
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		path = filepath.Join(dir, filepath.Base(path))
	}
	return path
}

// Open records a document opened in the editor.
func (o *Overlay) Open(path string, version int32, text string) {
	o.OpenURI(path, "", version, text)
}

// OpenURI records a document the client opened under uri (path is the
// file path of uri, which may go through symlinks).
func (o *Overlay) OpenURI(path, uri string, version int32, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	key := overlayKey(path)
	o.docs[key] = &document{text: text, version: version, uri: uri}
	o.touch(key)
	o.changed.Broadcast()
}

// ClientURI returns the URI the client opened the document at path under
// (path may be resolved or not), if it is open.
func (o *Overlay) ClientURI(path string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	doc, ok := o.docs[overlayKey(path)]
	if !ok || doc.uri == "" {
		return "", false
	}
	return doc.uri, true
}

// Change applies the changes of a didChange notification, in order
// (positions as package lsppos defines them), and sets the document's
// version. On error the document is left as it was.
func (o *Overlay) Change(path string, version int32, changes []Change) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	doc, ok := o.docs[overlayKey(path)]
	if !ok {
		return fmt.Errorf("didChange for %s, which is not open", path)
	}
	text, err := lsppos.ApplyChanges(doc.text, changes)
	if err != nil {
		return fmt.Errorf("didChange %s (version %d): %w", path, version, err)
	}
	doc.text, doc.version = text, version
	o.touch(overlayKey(path))
	o.changed.Broadcast()
	return nil
}

// Close forgets a document closed in the editor.
func (o *Overlay) Close(path string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.docs, overlayKey(path))
	o.changed.Broadcast()
}

// Saved records that the editor saved a document (didSave).
func (o *Overlay) Saved(path string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.touch(overlayKey(path))
}

// touch records the editor's report of the document at key; o.mu held.
func (o *Overlay) touch(key string) {
	o.seq++
	o.touched[key] = o.seq
}

// EditorMark returns a mark to pass to EditorChangedSince.
func (o *Overlay) EditorMark() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seq
}

// EditorChangedSince reports whether the editor opened, changed or saved
// path after mark was taken: the user's doing, as far as the editor
// tells.
func (o *Overlay) EditorChangedSince(path string, mark uint64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.touched[overlayKey(path)] > mark
}

// Dirty reports whether path is open with text other than the disk's
// (unsaved changes).
func (o *Overlay) Dirty(path string) bool {
	text, _, ok := o.Document(path)
	if !ok {
		return false
	}
	disk, err := os.ReadFile(path)
	return err != nil || string(disk) != text
}

// DirtyDocuments returns the open documents with unsaved changes.
func (o *Overlay) DirtyDocuments() map[string]bool {
	o.mu.Lock()
	paths := make([]string, 0, len(o.docs))
	for p := range o.docs {
		paths = append(paths, p)
	}
	o.mu.Unlock()
	out := map[string]bool{}
	for _, p := range paths {
		if o.Dirty(p) {
			out[p] = true
		}
	}
	return out
}

// Document returns an open document's text and version.
func (o *Overlay) Document(path string) (text string, version int32, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	doc, ok := o.docs[overlayKey(path)]
	if !ok {
		return "", 0, false
	}
	return doc.text, doc.version, true
}

// ReadFile implements tools.FileSource: the editor's text of an open
// document, else the file on disk at path, which the tool resolved and
// checked, read following no symbolic link on the way
// (tools.ReadResolved: a directory a command swapped for a link since
// the check leads nowhere) and never a FIFO or a device, which could
// block a tool.
func (o *Overlay) ReadFile(path string) ([]byte, error) {
	if text, _, ok := o.Document(path); ok {
		return []byte(text), nil
	}
	return tools.ReadResolved(path)
}

// readSeen is ReadFile for what loom itself looks at (the watcher's
// changed files, a command's), by the names it saw: a symbolic link is
// followed, as the editor would (the text goes to no one).
func (o *Overlay) readSeen(path string) ([]byte, error) {
	if text, _, ok := o.Document(path); ok {
		return []byte(text), nil
	}
	return tools.ReadRegular(path)
}

// waitChanged blocks until the document at path is closed, or its version
// differs from version, or done is closed. It reports whether it changed.
func (o *Overlay) waitChanged(path string, version int32, done <-chan struct{}) bool {
	key := overlayKey(path)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-done:
			o.mu.Lock()
			o.changed.Broadcast()
			o.mu.Unlock()
		case <-stop:
		}
	}()
	o.mu.Lock()
	defer o.mu.Unlock()
	for {
		doc, ok := o.docs[key]
		if !ok || doc.version != version {
			return true
		}
		select {
		case <-done:
			return false
		default:
		}
		o.changed.Wait()
	}
}

package workspace

import (
	"errors"
	"slices"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/agenthooks"
)

// startWatcher watches the folder and its configuration files on a worker
// goroutine, which stops with the folder. watchReady is closed once the
// initial watches are set up.
func (s *Folder) startWatcher() {
	opts := watchOptions{
		root:        s.dir,
		configFiles: append(config.LoadOptions{Folder: s.dir}.Files(), s.hookFiles()...),
		onFiles:     s.filesChanged,
		onConfig:    s.ReloadConfig,

		instructionFiles: s.instrPaths,
		onInstructions:   s.ReloadInstructions,
		log:              s.log.With("component", "watcher"),
		events:           s.cmds,
	}
	s.goWorker(func() {
		w, err := newWatcher(opts)
		close(s.watchReady)
		if err != nil {
			s.log.Warn("no file watcher: external changes are not detected", "err", err)
			return
		}
		w.run(s.life)
	})
}

// filesChanged hands changes seen on disk (on the watcher's goroutine) to
// every conversation of the folder.
func (f *Folder) filesChanged(paths []string) {
	if slices.ContainsFunc(paths, func(p string) bool { return agenthooks.IsHooksDirFile(f.dir, p) }) {
		f.ReloadConfig() // a .github/hooks file: the hooks are read again
	}
	f.mu.Lock()
	convs := slices.Clone(f.convs)
	f.mu.Unlock()
	for _, c := range convs {
		c.filesChanged(paths)
	}
}

// filesChanged handles changes seen on disk (on the watcher's goroutine):
// a file the model read whose content is no longer what it read, and is
// not what our own write put there (ownWrites), is marked stale, so that edit_file refuses it
// until it is read again, and the model is told at its next request.
func (s *Conversation) filesChanged(paths []string) {
	stale := s.stillStale(paths)
	if len(stale) == 0 {
		return
	}
	for _, p := range stale {
		s.reads.MarkStale(p)
	}
	s.post(func() {
		// Checked again when stepped: a read of the file may have
		// completed since, and the model has the new text.
		stale = s.stillStale(stale)
		if len(stale) == 0 {
			return
		}
		rel := relPaths(s.folder.dir, stale)
		if _, err := s.step(fsm.FilesChanged{Paths: rel}); err == nil {
			if news := s.own.news(rel); len(news) > 0 {
				s.notify(Notification{Kind: NoteInfo, Text: "changed on disk since the agent read them (it will read them again): " + strings.Join(news, ", ")})
			}
		}
	})
}

// stillStale are the paths whose text on disk is not what the model last
// read of them (nor loom's own write).
func (s *Conversation) stillStale(paths []string) []string {
	var stale []string
	for _, p := range paths {
		content, err := s.folder.host.overlay.ReadFile(p)
		if err != nil {
			content = nil // deleted or unreadable: no longer what was read
		}
		if s.writes.is(p, content) {
			continue // the echo of our own write
		}
		if err := s.reads.Check(p, content); errors.Is(err, tools.ErrStale) {
			stale = append(stale, p)
		}
	}
	return stale
}

// freshlyRead names the file a successful read_file call gave the
// model when its text on disk is still what the call read: a note that
// it changed, pending in the machine, is then dropped
// (fsm.ToolCompleted.Read).
func (s *Conversation) freshlyRead(c fsm.ToolCall, isError bool) []string {
	if c.Name != "read_file" || isError {
		return nil
	}
	rel := callPath(c.Arguments)
	if rel == "" {
		return nil
	}
	abs, err := tools.Resolve(s.folder.dir, rel)
	if err != nil {
		return nil
	}
	content, err := s.folder.host.overlay.ReadFile(abs)
	if err != nil || s.reads.Check(abs, content) != nil {
		return nil
	}
	return []string{s.relPath(abs)}
}

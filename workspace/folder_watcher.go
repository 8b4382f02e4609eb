package workspace

import (
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
		configFiles: append(config.LoadOptions{Folder: s.dir}.Files(), s.hookLoad.files()...),
		onFiles:     s.filesChanged,
		onConfig:    s.ReloadConfig,

		instructionFiles: s.instrPaths,
		onInstructions:   s.ReloadInstructions,
		log:              s.log.With("component", "watcher"),
		events:           s.cmds,
	}
	s.loop.goWorker(func() {
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
// not what our own write put there (ownWrites), is marked stale, so that
// edit_file refuses it until it is read again, and the model is told at
// its next request.
//
// Each changed file is read once, here (look): what is decided later
// (when the note is stepped, when a read_file call completes) asks the
// read tracker, which holds what the model read and what the watcher saw.
func (s *Conversation) filesChanged(paths []string) {
	stale := s.fresh.stillStale(s.folder.host.overlay.look(paths), true)
	if len(stale) == 0 {
		return
	}
	s.loop.post(func() {
		// Checked again when stepped: a read of the file may have
		// completed since, and the model has the new text.
		stale = s.fresh.stillStale(stale, false)
		if len(stale) == 0 {
			return
		}
		abs := make([]string, len(stale))
		for i, l := range stale {
			abs[i] = l.path
		}
		rel := relPaths(s.folder.dir, abs)
		if _, err := s.step(fsm.FilesChanged{Paths: rel}); err == nil {
			if news := s.own.news(rel); len(news) > 0 {
				s.out.notify(Notification{Kind: NoteInfo, Text: "changed on disk since the agent read them (it will read them again): " + strings.Join(news, ", ")})
			}
		}
	})
}

// seen is a changed file as the watcher read it: the hash of its content
// (of nothing when it is deleted or unreadable: no longer what was read).
type seen struct {
	path string
	sum  tools.Sum
}

// look reads each of paths once (the editor's buffer when it is open).
func (o *Overlay) look(paths []string) []seen {
	out := make([]seen, len(paths))
	for i, p := range paths {
		content, err := o.readSeen(p)
		if err != nil {
			content = nil
		}
		out[i] = seen{path: p, sum: tools.SumOf(content)}
	}
	return out
}

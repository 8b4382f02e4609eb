package workspace

import (
	"context"
	"slices"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/tools"
)

// Controls are the choices a front end makes for a conversation and
// reads back: its model and reasoning effort (models.go), its mode and
// the decision on a proposed plan (plan.go) — events of its machine,
// journaled —, and the client's system prompt (clientprompt.go) and read
// roots (readroots.go) — its settings —; and the catalogue of its model
// server (ModelCatalog). Each method runs on the conversation's goroutine
// and waits for it (ErrClosed once it stopped).
// Conversation.Controls returns it; it reaches the conversation only
// through the functions below.
type Controls struct {
	// do runs fn on the conversation's goroutine and waits for it.
	do func(ctx context.Context, fn func()) error
	// Those below are called only inside do. step steps an event of the
	// machine; m is the machine, cfg the configuration in force.
	step func(ev fsm.Event) error
	m    func() *fsm.Machine
	cfg  func() config.Config
	// provider is the model server's client in force; folder the
	// conversation's folder (the catalogue's cache and workers).
	provider func() llm.Provider
	folder   *Folder
	// usePrompt makes p (nil: none) the client's system prompt, useRoots
	// checks dirs and makes them the read roots (the roots as granted);
	// each applies the settings anew when it changed them.
	usePrompt func(p *ClientPrompt)
	useRoots  func(dirs []string) ([]string, error)
}

// Controls returns the conversation's controls.
func (s *Conversation) Controls() Controls {
	return Controls{
		do:       s.loop.call,
		step:     func(ev fsm.Event) error { _, err := s.step(ev); return err },
		m:        func() *fsm.Machine { return s.m },
		cfg:      func() config.Config { return s.cfg },
		provider: func() llm.Provider { return s.provider },
		folder:   s.folder,
		usePrompt: func(p *ClientPrompt) {
			if same(s.clientPrompt, p) {
				return
			}
			s.clientPrompt = p
			s.useSettings(s.settings)
		},
		useRoots: func(dirs []string) ([]string, error) {
			roots, err := tools.CheckReadRoots(s.folder.dir, dirs, s.env.Sandbox)
			if err != nil || slices.Equal(roots, s.readRoots) {
				return roots, err
			}
			s.readRoots = roots
			s.useSettings(s.settings)
			return roots, nil
		},
	}
}

package workspace

import (
	"path/filepath"

	"github.com/loom-lsp/loom-lsp/config"
)

// CompletionSetup is what inline completion at a path needs from the
// folder that holds it. Completion reads the folder's published settings
// and the overlay only: it never waits for, blocks or changes a
// conversation.
type CompletionSetup struct {
	// Config is the folder's completion configuration (its keys are
	// widening: a repository's .loom.toml does not set them).
	Config config.Completion
	// Key is the value of Config.APIKeyEnv ("" for none).
	Key string
	// Name is the path relative to the folder, shown to the model.
	Name string
}

// CompletionFor returns the completion setup of the folder that holds
// path; ok is false when no folder holds it, the folder's configuration
// did not load (or has not yet: completion does not wait for it), or
// completion is off there.
func (h *Host) CompletionFor(path string) (CompletionSetup, bool) {
	f, err := h.Folder(path)
	if err != nil {
		return CompletionSetup{}, false
	}
	st := f.settingsNow()
	if st.cfgErr != nil || !st.cfg.Completion.Enabled() {
		return CompletionSetup{}, false
	}
	name, err := filepath.Rel(f.dir, path)
	if err != nil {
		name = filepath.Base(path)
	}
	c := st.cfg.Completion
	return CompletionSetup{Config: c, Key: h.opts.Getenv(c.APIKeyEnv), Name: filepath.ToSlash(name)}, true
}

// CompletionConfigured reports whether inline completion is on in any
// of folders (or, with none, in the user's configuration) under
// overrides, before the folders are opened: what initialize declares.
func (h *Host) CompletionConfigured(folders []string, overrides []config.Override) bool {
	if len(folders) == 0 {
		folders = []string{""}
	}
	for _, folder := range folders {
		if cfg, err := h.opts.Config(folder, overrides); err == nil && cfg.Completion.Enabled() {
			return true
		}
	}
	return false
}

// Redact masks the secrets the host knows (the configured API keys,
// bearer tokens) in text, as in everything the sessions show.
func (h *Host) Redact(text string) string { return h.redactor.String(text) }

// CompletionLogPath is the local log of accepted inline completions, in
// the state directory: the user's to read, never sent anywhere.
func (h *Host) CompletionLogPath() (string, error) {
	dir, err := h.stateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "completion.log"), nil
}

// CompletionStatus names a folder's inline completion model, for the
// clients to show (loom.status).
type CompletionStatus struct {
	// API is the completion wire API ([completion] api: infill,
	// completions, ollama, mistral, chat).
	API string `json:"api"`
	// Model is [completion] model ("" when the server has one model).
	Model string `json:"model,omitempty"`
}

// completionStatus is the folder's completion model, nil when completion
// is off there.
func (f *Folder) completionStatus() *CompletionStatus {
	st := f.settingsNow()
	if st.cfgErr != nil || !st.cfg.Completion.Enabled() {
		return nil
	}
	return &CompletionStatus{API: st.cfg.Completion.API, Model: st.cfg.Completion.Model}
}

// CompletionOn reports whether inline completion is on in any open
// folder, from the settings they last published.
func (h *Host) CompletionOn() bool {
	h.mu.Lock()
	folders := h.sortedFolders()
	h.mu.Unlock()
	for _, f := range folders {
		if f.completionStatus() != nil {
			return true
		}
	}
	return false
}

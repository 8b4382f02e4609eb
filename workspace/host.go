package workspace

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/secret"

	"github.com/loom-lsp/loom-lsp/internal/gitcmd"
)

// HostOptions configures a Host.
type HostOptions struct {
	// Editor receives every session's notifications and requests.
	Editor Editor
	// Config loads the configuration of a folder. Default: config.Load
	// with the folder and the host's overrides.
	Config func(folder string, overrides []config.Override) (config.Config, error)
	// Provider builds the model provider for a configuration. Default:
	// NewProvider.
	Provider func(cfg config.Config, getenv func(string) string) (llm.Provider, error)
	// Getenv reads the environment (API keys, and what MCP servers are
	// passed). Default: secret.Lookup, which also finds the keys that
	// secret.Take moved out of the environment.
	Getenv func(string) string
	// StateDir holds the sessions' journals. Default: $XDG_STATE_HOME/loom.
	StateDir string
	// Logger logs to stderr or a file, never stdout. Default: discard.
	Logger *slog.Logger
	// TrustFile is where TrustFolder records trusted folders. Default:
	// config.DefaultTrustFile(), which config.Load reads.
	TrustFile string
	// TrustHow says, in the front end's own words, how the user trusts a
	// folder ("type /trust"); it ends the notice about ignored settings.
	// Called when a configuration loads. Default: config.DefaultTrustHow.
	TrustHow func() string
	// KeepHow and DiscardHow say, in the front end's own words, how the
	// user keeps (commits) or discards the files a command changed
	// ("type /keep with their paths"). Default: the commands loom.commit
	// and loom.discard with their paths.
	KeepHow, DiscardHow string
	// NewConversation makes every session start a new conversation, the
	// folder's journal set aside as a reset does, instead of resuming it
	// (`loom-lsp exec` without --resume).
	NewConversation bool
	// DiscardHeld deletes a protected name a command created (a .git, a
	// .loom.toml) at once instead of holding it for the user's review
	// (heldnames.go): `loom-lsp exec`, where no one reviews.
	DiscardHeld bool
	// ReadOnlyTrees are directories outside the folders that commands
	// never write, also inside a writable temp directory: the user's own
	// tree, when the folder is a git worktree a conversation works in
	// (exec --worktree; sandbox.Policy.ReadOnlyTrees).
	ReadOnlyTrees []string
	// SettingsPublished, when set, is called after a folder published new
	// settings (a load or reload of its configuration), on the folder's
	// goroutine: it must not block. The LSP front end registers inline
	// completion with the client as it turns on and off.
	SettingsPublished func()
}

// Host holds the workspace folders, their conversations and the overlay
// of open documents they share. Its methods are safe for concurrent use.
type Host struct {
	opts    HostOptions
	overlay *Overlay
	// redactor masks the API keys the sessions read (and those taken by
	// secret.Take) in everything sent to the editor, logged or journaled.
	redactor *secret.Redactor

	closeOnce sync.Once
	// rules are the folders' approval rules (approvalrules.go).
	rules *ApprovalRules

	mu        sync.Mutex
	folders   map[string]*Folder // by path
	overrides []config.Override
	closed    bool
}

// NewHost returns a Host with no folders.
func NewHost(opts HostOptions) *Host {
	if opts.TrustFile == "" {
		opts.TrustFile = config.DefaultTrustFile()
	}
	if opts.Config == nil {
		trustFile := opts.TrustFile
		opts.Config = func(folder string, overrides []config.Override) (config.Config, error) {
			cfg, _, err := config.Load(config.LoadOptions{Folder: folder, Overrides: overrides, TrustFile: trustFile})
			return cfg, err
		}
	}
	if opts.Provider == nil {
		opts.Provider = NewProvider
	}
	if opts.Getenv == nil {
		opts.Getenv = secret.Lookup
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := secret.NewRedactor(secret.Default)
	r.Add(opts.Getenv(config.Default().Model.APIKeyEnv))
	opts.Logger = slog.New(redactingHandler{Handler: opts.Logger.Handler(), r: r})
	h := &Host{opts: opts, overlay: NewOverlay(), folders: map[string]*Folder{}, redactor: r}
	h.rules = &ApprovalRules{stateDir: h.stateDir, log: opts.Logger}
	if dir, err := h.stateDir(); err == nil {
		// Journals and approval rules: never the agent's to write, even
		// where a folder contains them (the home directory).
		config.ProtectStateDir(dir)
	}
	return h
}

// Rules returns the folders' approval rules: the commands, MCP servers
// and fetch hosts the user allowed for good.
func (h *Host) Rules() *ApprovalRules { return h.rules }

// Overlay returns the open documents shared by the host's sessions.
func (h *Host) Overlay() *Overlay { return h.overlay }

// SetOverrides replaces the configuration layers that come from the
// client (initializationOptions, then workspace/didChangeConfiguration).
// Sessions started afterwards use them; running sessions reload.
func (h *Host) SetOverrides(overrides []config.Override) {
	h.mu.Lock()
	h.overrides = append([]config.Override(nil), overrides...)
	folders := h.sortedFolders()
	h.mu.Unlock()
	for _, f := range folders {
		f.ReloadConfig()
	}
}

// TrustFolder trusts the workspace folder that contains path (see
// config.Trust) with its current widening values: it is recorded in the
// trust file, so that the trust persists, and every session reloads its
// configuration. It returns the folder trusted.
func (h *Host) TrustFolder(path string) (string, error) {
	s, err := h.Conversation(path)
	if err != nil {
		return "", err
	}
	// Trust binds to the widening values the folder has now (its
	// .loom.toml and the editor's settings); a later change needs the
	// user again.
	cfg, _ := h.loadConfig(s.folder.dir)
	if err := config.TrustFolder(h.opts.TrustFile, s.folder.dir, cfg.ContentHash()); err != nil {
		return "", err
	}
	// And to its agent hooks as they are now, with the files they run.
	if err := s.folder.hookLoad.trust(); err != nil {
		return "", err
	}
	// And to its agent definitions as they are now.
	if err := s.folder.trustAgents(); err != nil {
		return "", err
	}
	// Trusting the folder confirms the repository it is in now (one a
	// command created since it was opened).
	s.folder.repo.record(s.folder.life)
	h.mu.Lock()
	folders := h.sortedFolders()
	h.mu.Unlock()
	for _, f := range folders {
		f.ReloadConfig()
	}
	return s.folder.dir, nil
}

// AddFolder opens folder (an absolute path) and starts its conversation,
// which it returns. Adding a folder twice is a no-op. A configuration
// error does not prevent the conversation from starting: it is reported,
// and asking fails with it.
func (h *Host) AddFolder(folder string) (*Conversation, error) {
	folder, err := canonicalFolder(folder)
	if err != nil {
		return nil, err
	}
	f, err := h.OpenFolder(folder)
	if err != nil {
		return nil, err
	}
	return f.Current()
}

// OpenFolder opens folder (an absolute path) without opening any of its
// conversations. Opening a folder twice is a no-op.
func (h *Host) OpenFolder(folder string) (*Folder, error) {
	folder, err := canonicalFolder(folder)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("add folder %s: the host is shut down", folder)
	}
	f, ok := h.folders[folder]
	if !ok {
		f = newFolder(h, folder)
		h.folders[folder] = f
		go f.run()
	}
	return f, nil
}

// RemoveFolder closes the folder and waits for its conversations.
func (h *Host) RemoveFolder(folder string) {
	folder, err := canonicalFolder(folder)
	if err != nil {
		return
	}
	h.mu.Lock()
	f := h.folders[folder]
	delete(h.folders, folder)
	h.mu.Unlock()
	if f != nil {
		f.Close()
	}
}

// Folders returns the paths of the open folders, sorted.
func (h *Host) Folders() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	folders := make([]string, 0, len(h.folders))
	for f := range h.folders {
		folders = append(folders, f)
	}
	sort.Strings(folders)
	return folders
}

// Conversation returns the most recent conversation of the folder that
// contains path (see Folder and Folder.Current).
func (h *Host) Conversation(path string) (*Conversation, error) {
	f, err := h.Folder(path)
	if err != nil {
		return nil, err
	}
	return f.Current()
}

// Folder returns the folder that contains path (a file or folder path),
// the innermost one when folders nest. An empty path selects the only
// folder; it is an error when there are several.
func (h *Host) Folder(path string) (*Folder, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.folders) == 0 {
		return nil, fmt.Errorf("no workspace folder is open")
	}
	if path == "" {
		if len(h.folders) == 1 {
			for _, f := range h.folders {
				return f, nil
			}
		}
		return nil, fmt.Errorf("%d workspace folders are open: say which one with a uri", len(h.folders))
	}
	path = filepath.Clean(path)
	if abs, err := filepath.EvalSymlinks(path); err == nil {
		path = abs
	}
	var best *Folder
	for folder, f := range h.folders {
		if path == folder || strings.HasPrefix(path, folder+string(filepath.Separator)) {
			if best == nil || len(folder) > len(best.dir) {
				best = f
			}
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%s is not inside any open workspace folder", path)
	}
	return best, nil
}

// Close shuts every folder down: in-flight turns are cancelled, child
// processes killed, journals flushed. It waits for all of them, also when
// another Close (LSP shutdown, then the teardown) got there first.
func (h *Host) Close() { h.closeOnce.Do(h.closeFolders) }

func (h *Host) closeFolders() {
	h.mu.Lock()
	h.closed = true
	folders := h.sortedFolders()
	h.folders = map[string]*Folder{}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, f := range folders {
		wg.Add(1)
		go func() { defer wg.Done(); f.Close() }()
	}
	wg.Wait()
}

func (h *Host) sortedFolders() []*Folder {
	out := make([]*Folder, 0, len(h.folders))
	for _, p := range sortedKeys(h.folders) {
		out = append(out, h.folders[p])
	}
	return out
}

func (h *Host) loadConfig(folder string) (config.Config, error) {
	h.mu.Lock()
	overrides := h.overrides
	h.mu.Unlock()
	return h.opts.Config(folder, overrides)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func canonicalFolder(folder string) (string, error) {
	if !filepath.IsAbs(folder) {
		return "", fmt.Errorf("workspace folder %q is not an absolute path", folder)
	}
	resolved, err := filepath.EvalSymlinks(folder)
	if err != nil {
		return "", fmt.Errorf("workspace folder: %w", err)
	}
	st, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("workspace folder: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("workspace folder %s is not a directory", folder)
	}
	// The agent's commands write here: loom never takes the git it runs
	// with the user's rights from a directory of it on PATH.
	gitcmd.Avoid(resolved)
	return resolved, nil
}

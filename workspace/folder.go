package workspace

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/mcp"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
	"github.com/loom-lsp/loom-lsp/workspace/agentfiles"
	"github.com/loom-lsp/loom-lsp/workspace/diagnostics"
)

// Folder is one workspace folder: its conversations and the parts they
// share. The host's overlay holds its open documents; the folder adds its
// file watcher (folder_watcher.go), its configuration (folder_config.go),
// its MCP servers (mcp.go), its project instructions (instructions.go),
// the model's context window (context.go), and the git side of its
// conversations' commits (hook.go, package gitcommit).
//
// One goroutine (run) owns the folder's configuration, MCP servers and
// context-window probe. Each change of what the conversations run with
// (their settings) is published to every conversation, whose own
// goroutine applies it between events. The folder's methods are safe for
// concurrent use.
type Folder struct {
	host *Host
	dir  string
	log  *slog.Logger

	// reloadFailed: the last reload found a broken configuration and kept
	// the one before; the folder's goroutine owns it.
	reloadFailed bool
	// providerKey is a hash of the API key the current provider was
	// built with: a new key needs a new provider.
	providerKey string
	// afterPublish holds notices about tools (an MCP server ready, tools
	// left out) until the settings they speak of reach the conversations,
	// so that a prompt sent on seeing one sees the tools; the folder's
	// goroutine owns it.
	afterPublish []Notification

	// life is cancelled when the folder shuts down; work that must not be
	// cut short by a cancelled turn (a git commit) runs under it.
	life    context.Context
	endLife context.CancelFunc

	// loop is how work reaches the folder's goroutine (run): unlike a
	// conversation's, it serves calls while it drains (ownerLoop.draining).
	loop       ownerLoop
	configured chan struct{} // closed once the first configuration is loaded
	// watchReady is closed once the file watcher is set up.
	watchReady chan struct{}

	// Owned by the run goroutine.
	//
	// mcp runs the configured MCP servers; their tools join the
	// conversations' registries.
	mcp *mcp.Manager
	// sandbox confines commands and stdio MCP servers; nil when
	// tools.sandbox = "off". Set on the owner goroutine with the
	// configuration.
	sandbox *sandbox.Sandbox
	// offline is offlineOf.Offline(), kept while sandbox is offlineOf:
	// the repository's stdio MCP servers' sandbox under tools.bash = "ask".
	offline, offlineOf *sandbox.Sandbox
	// mcpHeld is the notice of the repository's MCP servers held back
	// (repoServerSandbox), as last said.
	mcpHeld string
	// mcpPeerNotes is the notice of the peers' MCP files' servers left
	// out, said once per change.
	mcpPeerNotes string
	// mcpReady names the servers last seen ready.
	mcpReady map[string]bool
	// instrPaths are where the project's AGENTS.md files are looked for
	// (found once, at start).
	instrPaths []string
	// window asks the model's server for its context window
	// (windowprobe.go).
	window windowProbe
	// next is the settings being built, published by publish.
	next settings
	// cmds tells which files the commands the agent runs change, from the
	// watcher's events (cmdwindow.go).
	cmds *commandWindows

	// heldRestored lists the names held before a restart (heldnames.go)
	// once, with the first conversation started here.
	heldRestored sync.Once
	// worktreeMu serialises what writes the worktree for the
	// conversations (gitState.lock): their mutating tool calls, commits
	// and undos. So a command's window (cmdwindow.go) never sees another
	// conversation's edit.
	worktreeMu sync.Mutex
	// indexFollow updates the user's index once a held index.lock is
	// released (indexfollow.go).
	indexFollow *indexFollower
	// skills are the skills last read, for the skill tool (any
	// goroutine).
	skills atomic.Pointer[[]agentfiles.Skill]
	// agents are the agent definitions last read, for the agent tool's
	// description (any goroutine).
	agents atomic.Pointer[[]agentfiles.Agent]
	// hooks are the agent hooks last loaded, nil when none (any
	// goroutine); hookLoad loads them (agenthooks.go).
	hooks    atomic.Pointer[folderHooks]
	hookLoad *hookLoader
	// agentNotice is the last notice about ignored skill and command
	// files, shown once per change; the folder's goroutine owns it.
	agentNotice string
	// lang is the language servers loom runs for the folder
	// (langservers.go).
	lang langServers
	// editorDiagsUnsupported is set once the editor said it cannot give
	// diagnostics: the folder's own language servers are used instead.
	editorDiagsUnsupported atomic.Bool
	// repo is the git repository found when the folder was opened or
	// last trusted: the only one loom commits into (gitrepo.go).
	repo folderRepo
	// currentMu makes the openers (Current, New, Conversation) open one
	// conversation at a time: between a journal's lock and its
	// conversation's registration no other opener lists the journals.
	currentMu sync.Mutex

	mu sync.Mutex
	// current is the settings last published.
	current settings
	// convs are the open conversations, most recently used first.
	convs  []*Conversation
	closed bool
}

// settings is what a conversation runs with, derived by its folder from
// the configuration: each conversation holds the copy last published to
// it.
type settings struct {
	cfg      config.Config
	cfgErr   error        // the configuration could not be loaded
	modelErr error        // no usable model (nil when provider is set)
	provider llm.Provider // nil when modelErr is set
	registry *tools.Registry
	schemas  []llm.ToolSchema
	// mcpPolicies is each MCP server's approve policy, by server name.
	mcpPolicies map[string]config.Policy
	// env is the tools' environment; each conversation sets its Reads.
	env tools.Env
	// agent is the folder's and the user's skills and custom commands
	// (agentfiles.go).
	agent agentFiles
	// instr is what was read of the project's AGENTS.md files.
	instr instructions
	// toolsNote is the notice about MCP tools left out (name collisions,
	// past MaxTools) last shown, "" when none.
	toolsNote string
	// langServers runs the language servers that check the agent's
	// edits, nil when loom runs none for the folder (langservers.go).
	langServers *diagnostics.Pool
	// trustNotice is the untrusted-folder notice, "" when none.
	trustNotice string
	// serverWindow is what the model's server said of its context window
	// (zero when nothing yet), and windowAsking whether the question is
	// in flight.
	serverWindow llm.Window
	windowAsking bool
	// runningWindow is the window the server runs the model with now
	// (Ollama's /api/ps), zero until known: it bounds serverWindow and
	// model.context_window.
	runningWindow llm.Window
}

func newFolder(h *Host, folder string) *Folder {
	life, endLife := context.WithCancel(context.Background())
	log := h.opts.Logger.With("folder", folder)
	f := &Folder{
		host:       h,
		dir:        folder,
		log:        log,
		life:       life,
		endLife:    endLife,
		loop:       ownerLoop{in: make(chan func(), 16), quit: make(chan struct{}), done: make(chan struct{}), servesDraining: true},
		configured: make(chan struct{}),
		watchReady: make(chan struct{}),
		mcp:        mcp.NewManager(mcp.Options{Logger: log, Tokens: h.mcpTokens()}),
		cmds:       newCommandWindows(),
		next:       settings{registry: tools.DefaultRegistry()},
	}
	f.repo.dir = folder
	f.indexFollow = &indexFollower{dir: folder, life: life, worktreeMu: &f.worktreeMu, goWorker: f.loop.goWorker}
	f.window = windowProbe{next: &f.next, host: h, log: log, life: life, post: f.loop.post, call: f.loop.call, goWorker: f.loop.goWorker,
		publish: f.publish, notify: f.notify}
	f.hookLoad = &hookLoader{dir: folder, home: func() string { return h.opts.Getenv("HOME") }, trustFile: h.opts.TrustFile,
		trustHow: h.opts.TrustHow, log: log, notify: f.notify}
	return f
}

// Path returns the folder's path (absolute, resolved).
func (f *Folder) Path() string { return f.dir }

// run is the folder's goroutine.
func (f *Folder) run() {
	defer close(f.loop.done)
	f.repo.record(f.life)
	f.loadConfig(false)
	close(f.configured)
	f.startWatcher()
	for stop := false; !stop; {
		select {
		case fn := <-f.loop.in:
			fn()
		case <-f.mcp.Changed():
			f.syncMCP()
		case <-f.loop.quit:
			stop = true
		}
	}
	f.endLife()
	finished := make(chan struct{})
	go func() { f.loop.workers.Wait(); close(finished) }()
	for waiting := true; waiting; {
		select {
		case fn := <-f.loop.in:
			fn()
		case <-finished:
			waiting = false
		}
	}
	f.mcp.Close()
}

// publish makes f.next the settings of every conversation, on the
// folder's goroutine.
func (f *Folder) publish() {
	st := f.next
	f.mu.Lock()
	f.current = st
	convs := slices.Clone(f.convs)
	f.mu.Unlock()
	for _, c := range convs {
		c.loop.post(func() { c.useSettings(st) })
	}
	f.flushNotices()
	if on := f.host.opts.SettingsPublished; on != nil {
		on()
	}
}

// flushNotices sends the notices held until the settings were published.
func (f *Folder) flushNotices() {
	notes := f.afterPublish
	f.afterPublish = nil
	for _, n := range notes {
		f.notify(n)
	}
}

// settingsNow returns the settings last published.
func (f *Folder) settingsNow() settings {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.current
}

// notify sends a notice of the folder (not of one of its conversations)
// to the editor, masked.
func (f *Folder) notify(n Notification) {
	n.Folder = f.dir
	f.host.opts.Editor.Notify(redactNote(f.host.redactor, n))
}

// reloadWait bounds how long ReloadConfig waits for the folder's
// goroutine.
const reloadWait = 5 * time.Second

// ReloadConfig reloads the folder's configuration. A broken one keeps the
// current configuration and is reported. It waits (up to reloadWait) until
// every conversation has been handed the result, so that a request the
// editor sends after its new settings (loom.status, loom.ask) sees them.
func (f *Folder) ReloadConfig() {
	done := make(chan struct{})
	f.loop.post(func() { defer close(done); f.loadConfig(true) })
	t := time.NewTimer(reloadWait)
	defer t.Stop()
	select {
	case <-done:
	case <-f.loop.done:
	case <-t.C:
		f.log.Warn("configuration reload still running; not waiting for it")
	}
}

// Close shuts the folder down: every conversation's turn in flight is
// cancelled, child processes are killed, and Close waits until all of
// them have stopped.
func (f *Folder) Close() {
	f.mu.Lock()
	f.closed = true
	convs := f.convs
	f.convs = nil
	f.mu.Unlock()
	f.endLife()
	var wg sync.WaitGroup
	for _, c := range convs {
		wg.Add(1)
		go func() { defer wg.Done(); c.Close() }()
	}
	wg.Wait()
	f.lang.close()
	select {
	case <-f.loop.quit:
	default:
		close(f.loop.quit)
	}
	<-f.loop.done
}

// errFolderClosed is returned for a conversation of a folder closing.
var errFolderClosed = fmt.Errorf("the workspace folder is closed: %w", ErrClosed)

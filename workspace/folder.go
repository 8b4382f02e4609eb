package workspace

import (
	"context"
	"log/slog"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/mcp"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// Folder is one workspace folder: the parts its conversations share. The
// host's overlay holds its open documents; the folder adds its file
// watcher (folder_watcher.go), its configuration (folder_config.go), its
// MCP servers (mcp.go), its project instructions (instructions.go), the
// model's context window (context.go), and the git side of its
// conversations' commits (hook.go, package gitcommit).
//
// A folder holds one conversation; its fields are owned by that
// conversation's goroutine.
type Folder struct {
	host   *Host
	folder string
	log    *slog.Logger

	// life is cancelled when the folder shuts down; work that must not be
	// cut short by a cancelled turn (a git commit) runs under it.
	life    context.Context
	endLife context.CancelFunc

	// mcp runs the configured MCP servers; their tools join the
	// conversations' registries.
	mcp *mcp.Manager
	// sandbox confines commands and stdio MCP servers; nil when
	// tools.sandbox = "off". Set on the owner goroutine with the
	// configuration.
	sandbox *sandbox.Sandbox
	// mcpReady names the servers last seen ready.
	mcpReady map[string]bool
	// watchReady is closed once the file watcher is set up.
	watchReady chan struct{}
	// trustNotice is the untrusted-folder notice last shown, "" when none.
	trustNotice string
	// instrPaths are where the project's AGENTS.md files are looked for
	// (found once, at start).
	instrPaths []string
	// window is what the model's server said of its context window.
	window serverWindow

	// conv is the folder's conversation.
	conv *Conversation
}

func newFolder(h *Host, folder string) *Folder {
	life, endLife := context.WithCancel(context.Background())
	log := h.opts.Logger.With("folder", folder)
	f := &Folder{
		host:       h,
		folder:     folder,
		log:        log,
		life:       life,
		endLife:    endLife,
		mcp:        mcp.NewManager(mcp.Options{Logger: log}),
		watchReady: make(chan struct{}),
	}
	f.conv = newConversation(f)
	return f
}

// Path returns the folder's path (absolute, resolved).
func (f *Folder) Path() string { return f.folder }

// start starts the folder's conversation.
func (f *Folder) start() { go f.conv.run() }

// Close shuts the folder down: its conversation stops (see
// Conversation.Close).
func (f *Folder) Close() { f.conv.Close() }

// settings is what a conversation runs with, derived from its folder's
// configuration.
type settings struct {
	cfg      config.Config
	cfgErr   error        // the configuration could not be loaded
	modelErr error        // no usable model (nil when provider is set)
	provider llm.Provider // nil when modelErr is set
	registry *tools.Registry
	schemas  []llm.ToolSchema
	// mcpPolicies is each MCP server's approve policy, by server name.
	mcpPolicies map[string]config.Policy
	env         tools.Env
	// instr is what was read of the project's AGENTS.md files.
	instr instructions
}

package fsm

import "time"

// ToolSpec declares what the machine needs to know of a tool.
type ToolSpec struct {
	// Mutating tools may change the workspace: they run one at a time and
	// a successful one triggers the post-tool hook.
	Mutating bool
	// RunsReadOnly says the caller can run this mutating tool with no
	// write access (a command in a sandbox whose workspace is read-only,
	// tools.plan_commands = "read-only"): in a read-only mode its calls
	// then run so (ExecuteTools.ReadOnly), as non-mutating calls, rather
	// than being refused.
	RunsReadOnly bool
}

// Config parameterises a Machine. The zero value of each field means its
// default, as listed.
type Config struct {
	// SystemPrompt, when not empty, is the conversation's first message.
	SystemPrompt string
	// Tools declares the tools the model may call, by name. A call to a
	// tool not listed here gets a tool error result and is not executed.
	Tools map[string]ToolSpec
	// MaxRetries counts retries of one model request, not attempts: 3 means
	// up to 4 attempts. Default 3; negative means no retry.
	MaxRetries int
	// MaxIterations bounds the model requests of one user turn (retries
	// excluded). Default 25.
	MaxIterations int
	// RetryBase is the first retry delay; each retry doubles it. Default 1s.
	RetryBase time.Duration
	// RetryMax caps the computed delay (not the server's Retry-After).
	// Default 30s.
	RetryMax time.Duration
	// MaxRetryAfter is the longest server Retry-After the machine will wait;
	// a longer one ends the turn with an error. Default 5m.
	MaxRetryAfter time.Duration
	// Jitter, in [0,1], shortens each computed delay by up to this fraction,
	// drawn deterministically from JitterSeed. Default 0.
	Jitter float64
	// JitterSeed seeds the jitter.
	JitterSeed uint64
	// ContinueFrom makes New count turns and requests on from these ids,
	// so that a session's new conversation (after a Reset, in a new
	// journal) never reuses an id. Reconfigure ignores it.
	ContinueFrom IDs `json:",omitzero"`
	// ContextWindow is the model's context window in tokens; 0 turns
	// context management off (no threshold; a context-length error
	// still compacts).
	ContextWindow int `json:",omitempty"`
	// CompactAt is the fraction of ContextWindow past which the
	// conversation is compacted before a request. Default 0.8.
	CompactAt float64 `json:",omitempty"`
	// KeepToolTurns is how many of the last user turns keep their tool
	// results whole in what is sent; older results over 1 KB are elided.
	// Default 3; negative keeps every result.
	KeepToolTurns int `json:",omitempty"`
	// ReviewEdits (tools.edits = "review") makes mutating calls propose
	// their file changes for the user's review instead of writing them.
	ReviewEdits bool `json:",omitempty"`
	// StopHooks: Stop hooks are configured; a response that ends the turn
	// asks for them first (RunStopHooks), and they may continue it.
	StopHooks bool `json:",omitempty"`
	// Depth is the conversation's depth among subagents: 0 for the
	// user's conversation, its children 1, and so on (SpawnCaps.MaxDepth).
	Depth int `json:",omitempty"`
	// ReadOnly locks the conversation in a read-only mode, whatever
	// SetMode or an accepted plan says: a child of a read-only
	// conversation, or one whose definition asks for it.
	ReadOnly bool `json:",omitempty"`
	// Subagents caps the children the conversation starts (AgentTool).
	Subagents SpawnCaps `json:",omitzero"`
}

func (c Config) withDefaults() Config {
	if c.MaxRetries == 0 {
		c.MaxRetries = 3
	} else if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.MaxIterations <= 0 {
		c.MaxIterations = 25
	}
	if c.RetryBase <= 0 {
		c.RetryBase = time.Second
	}
	if c.RetryMax <= 0 {
		c.RetryMax = 30 * time.Second
	}
	if c.MaxRetryAfter <= 0 {
		c.MaxRetryAfter = 5 * time.Minute
	}
	if c.CompactAt <= 0 || c.CompactAt > 1 {
		c.CompactAt = 0.8
	}
	if c.KeepToolTurns == 0 {
		c.KeepToolTurns = 3
	}
	if c.Jitter < 0 {
		c.Jitter = 0
	} else if c.Jitter > 1 {
		c.Jitter = 1
	}
	return c
}

package config

import (
	"fmt"
	"strings"
	"time"
)

// Subagents is [subagents]: the caps on the children (subagents) a
// conversation starts with the agent tool. Each cap reached is a tool
// error the model reads. A workspace layer (the folder's .loom.toml,
// pushed settings) may only lower them: a value above the user's own is
// a widening key, held back until the folder is trusted.
type Subagents struct {
	// MaxDepth is how deep subagents nest: 1 lets the user's conversation
	// start subagents and a subagent none; 0 turns subagents off.
	MaxDepth int `toml:"max_depth"`
	// MaxRunning bounds the subagents of one conversation running at
	// once.
	MaxRunning int `toml:"max_running"`
	// MaxPerTurn bounds the subagents started in one user turn.
	MaxPerTurn int `toml:"max_per_turn"`
	// MaxTokens bounds one subagent's tokens (prompt + completion, over
	// all its model requests); a subagent past it is stopped.
	MaxTokens int `toml:"max_tokens"`
	// MaxTurnTokens bounds the tokens of all the subagents of one user
	// turn.
	MaxTurnTokens int `toml:"max_turn_tokens"`
	// Timeout bounds one subagent's wall time; a subagent past it is
	// stopped.
	Timeout Duration `toml:"timeout"`
	// Models are the models (names on your model server) a subagent's
	// definition may choose with its model field: a listed name, or an
	// alias (Claude's haiku, sonnet, opus) that exactly one listed name
	// contains. Any other model a definition names is not used: the
	// subagent runs on the conversation's model, and you are told.
	Models []string `toml:"models"`
}

// DefaultSubagents are the caps when no file sets them.
func DefaultSubagents() Subagents {
	return Subagents{MaxDepth: 1, MaxRunning: 4, MaxPerTurn: 8, MaxTokens: 200_000, MaxTurnTokens: 1_000_000, Timeout: Duration{10 * time.Minute}}
}

// validateSubagents adds the errors of [subagents].
func (c Config) validateSubagents(add func(*Error)) {
	s := c.Subagents
	if s.MaxDepth < 0 {
		add(c.keyErr("subagents.max_depth", "must be >= 0, got %d", s.MaxDepth))
	}
	for key, v := range map[string]int{"max_running": s.MaxRunning, "max_per_turn": s.MaxPerTurn, "max_tokens": s.MaxTokens, "max_turn_tokens": s.MaxTurnTokens} {
		if v < 1 {
			add(c.keyErr("subagents."+key, "must be >= 1, got %d", v))
		}
	}
	if s.Timeout.Duration <= 0 {
		add(c.keyErr("subagents.timeout", "must be > 0, got %s", s.Timeout.Duration))
	}
	for _, m := range s.Models {
		if strings.TrimSpace(m) == "" || len(m) > 256 || strings.ContainsAny(m, "\n\r\x00") {
			add(c.keyErr("subagents.models", "a model name must be one line of 1 to 256 bytes, got %q", m))
		}
	}
}

// subagentCap is the value of cap key (its name in [subagents]) as a
// number to compare: a count, tokens, or a timeout's nanoseconds.
func subagentCap(val any) (float64, bool) {
	switch v := val.(type) {
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	case float64:
		return v, true
	case string:
		d, err := time.ParseDuration(v)
		return float64(d), err == nil
	case Duration:
		return float64(v.Duration), true
	}
	return 0, false
}

// subagentCaps are c's caps by key, as subagentCap reads them.
func (s Subagents) caps() map[string]float64 {
	return map[string]float64{"max_depth": float64(s.MaxDepth), "max_running": float64(s.MaxRunning), "max_per_turn": float64(s.MaxPerTurn),
		"max_tokens": float64(s.MaxTokens), "max_turn_tokens": float64(s.MaxTurnTokens), "timeout": float64(s.Timeout.Duration)}
}

// subagentWidens reports whether a workspace layer setting key (a
// dotted path under subagents) to val raises a cap above own, the
// user's: a value it cannot read widens too (it is held, and named).
func subagentWidens(own map[string]float64, key string, val any) bool {
	name, ok := strings.CutPrefix(key, "subagents.")
	if !ok {
		return false
	}
	if name == "" || strings.Contains(name, ".") {
		return true
	}
	v, ok := subagentCap(val)
	limit, known := own[name]
	return !ok || !known || v > limit
}

// String names the caps, for messages.
func (s Subagents) String() string {
	return fmt.Sprintf("depth %d, %d running, %d per turn, %d tokens each, %d per turn, %s each",
		s.MaxDepth, s.MaxRunning, s.MaxPerTurn, s.MaxTokens, s.MaxTurnTokens, s.Timeout.Duration)
}

package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
)

// Widening keys.
//
// A widening key gives the agent more than the defaults and the user's
// own file gave it: where model requests go and with which credentials,
// which commands run without asking, which servers start, what runs after
// a tool, and what a turn may cost. A key that only narrows (tools.bash =
// "ask" or "deny") applies from any source at once.

// WideningKey reports whether a workspace layer (the folder's .loom.toml,
// or settings an editor pushes, which a repository's .vscode/settings.json
// or .dir-locals.el may fill) setting key (a dotted path) to val widens
// what the agent may do or spend, so that it applies only in a trusted
// folder and only with the values the user trusted (see [Trust]).
func WideningKey(key string, val any) bool {
	switch key {
	// Where requests go, with which credentials and headers.
	case "model.base_url", "model.api_key_env", "model.provider", "model.script":
		return true
	// What a turn may cost.
	case "model.name", "model.max_tokens", "model.context_window", "model.reasoning_effort",
		"agent.max_iterations", "agent.max_retries", "agent.system_prompt",
		"tools.max_output_bytes", "tools.bash_max_timeout":
		return true
	// Commands run without asking. (And "ask" where the user's own
	// settings say "deny": see [ownFloor].)
	case "tools.bash":
		s, _ := val.(string)
		return s == string(PolicyAllow)
	// Commands run in the read-only modes.
	case "tools.plan_commands":
		s, _ := val.(string)
		return s == PlanCommandsReadOnly
	// Edits land without review.
	case "tools.edits":
		s, _ := val.(string)
		return s == "auto"
	}
	// The web: fetched without asking, private hosts, search endpoints.
	if fetchKeyWidens(key, val) {
		return true
	}
	// The sandbox: turned off, more places to write, the network on.
	if SandboxKeyWidens(key, val) {
		return true
	}
	// Inline completion: every key (where the buffer's text goes, with
	// which key, what it costs).
	for _, table := range []string{"model.headers", "hooks", "mcp", "trust", "tools.language_servers", "completion"} {
		if key == table || strings.HasPrefix(key, table+".") {
			return true
		}
	}
	return false
}

// WideningKeys names the widening keys (or tables), for documentation and
// messages.
func WideningKeys() []string {
	return []string{"model.base_url", "model.api_key_env", "model.headers.*", "model.provider", "model.script",
		"model.name", "model.max_tokens", "model.context_window", "model.reasoning_effort", "agent.max_iterations", "agent.max_retries",
		"agent.system_prompt", "tools.max_output_bytes", "tools.bash_max_timeout",
		`tools.bash = "allow"`, `tools.bash = "ask" over your "deny"`, `tools.diagnostics = "auto" over your "off"`, `tools.plan_commands = "read-only"`, `tools.edits = "auto"`, `tools.sandbox = "off"`, "tools.sandbox_write",
		`tools.network (other than "off")`, "tools.sandbox_hide", "tools.sandbox_unhide", "tools.sandbox_sockets", "tools.language_servers.*", "hooks.*", "mcp.*", "completion.*",
		`tools.fetch = "allow"`, `tools.fetch = "ask" over your "deny"`, "tools.fetch_private", "tools.fetch_max_bytes", "tools.fetch_timeout", "search.*",
		"subagents.* above your own"}
}

// ownFloor is what the user's own settings (the defaults, the user's
// file, the client's initializationOptions and the user's settings)
// keep narrower than the defaults, where a workspace layer's default
// value would undo it: tools.bash = "ask" (the default) widens a user's
// "deny" (commands could run again, and with them language servers and
// the repository's hooks), tools.diagnostics = "auto" a user's "off" (a
// language server runs the project's build). Elsewhere the same values
// narrow (a workspace's "ask" over the user's "allow") and apply at once.
type ownFloor struct {
	bash        Policy
	fetch       Policy
	diagnostics string
	// subagents are the user's caps on subagents, by key: a workspace
	// layer may only lower them.
	subagents map[string]float64
}

// widens reports whether a workspace layer setting key to val widens
// what the user gave: a [WideningKey], or a default value under the
// user's own narrower one.
func (f ownFloor) widens(key string, val any) bool {
	if WideningKey(key, val) || subagentWidens(f.subagents, key, val) {
		return true
	}
	s, _ := val.(string)
	switch key {
	case "tools.bash":
		return s == string(PolicyAsk) && f.bash == PolicyDeny
	case "tools.fetch":
		return s == string(PolicyAsk) && f.fetch == PolicyDeny
	case "tools.diagnostics":
		return s == DiagnosticsAuto && f.diagnostics == DiagnosticsOff
	}
	return false
}

// narrowedBy is f after a layer of the user's own that sets raw.
func (f ownFloor) narrowedBy(raw map[string]any) ownFloor {
	tools, _ := raw["tools"].(map[string]any)
	if s, ok := tools["bash"].(string); ok {
		switch Policy(s) {
		case PolicyAllow, PolicyAsk, PolicyDeny:
			f.bash = Policy(s)
		}
	}
	if s, ok := tools["fetch"].(string); ok {
		switch Policy(s) {
		case PolicyAllow, PolicyAsk, PolicyDeny:
			f.fetch = Policy(s)
		}
	}
	if s, ok := tools["diagnostics"].(string); ok && (s == DiagnosticsAuto || s == DiagnosticsOff) {
		f.diagnostics = s
	}
	if sub, ok := raw["subagents"].(map[string]any); ok {
		caps := map[string]float64{}
		for k, v := range f.subagents {
			caps[k] = v
		}
		for k, v := range sub {
			if n, ok := subagentCap(v); ok && n < caps[k] {
				caps[k] = n
			}
		}
		f.subagents = caps
	}
	return f
}

// RestrictedKeys is WideningKeys, under its former name.
func RestrictedKeys() []string { return WideningKeys() }

// heldKey is a widening key a workspace layer set, with its value, held
// back until the folder's trust and content are known.
type heldKey struct {
	key string
	val any
	src string // the layer's name: a file path or an override name
}

// contentHash is the hash of the widening values of a folder's workspace
// layers that a trust record binds to: "sha256:" and hex. The layers'
// names are left out, so that the same values moved between the file
// and the settings stay trusted.
func contentHash(held []heldKey) string {
	lines := make([]string, 0, len(held))
	for _, h := range held {
		v, err := json.Marshal(h.val)
		if err != nil {
			v = []byte("?")
		}
		lines = append(lines, h.key+"="+string(v))
	}
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// NoValuesHash is [contentHash] of no widening values: what a folder
// trusted without a workspace file (or with one that widens nothing)
// records.
var NoValuesHash = contentHash(nil)

// IsSection reports whether name is a top-level section of loom.toml
// ("model", "tools", …), to tell loom's settings from other servers'.
func IsSection(name string) bool {
	_, ok := fieldByTag(reflect.ValueOf(Config{}), name)
	return ok
}

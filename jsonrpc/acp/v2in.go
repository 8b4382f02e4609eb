package acp

import (
	"encoding/json"
)

// ACP v2's client messages, as the handlers take them (see protocol.go).
// Names from @agentclientprotocol/sdk 2.4.0 schema/v2/schema.json.

// The extension methods v2's requests are handed to the SDK as.
const (
	// extPromptV2 is v2's session/prompt: it answers {messageId} once
	// the prompt is inserted, and the turn reports through state_update
	// (v2state.go).
	extPromptV2 = "_loom/v2/session/prompt"
	// extReplayRefused is a session/resume whose replayFrom loom does
	// not serve: the schema requires -32602 rather than another cursor.
	extReplayRefused = "_loom/v2/session/resume"
)

// v2Removed are v1 methods v2 removed: a v2 client calling one gets
// "method not found", as from an agent that never had it.
var v2Removed = map[string]bool{
	"session/load": true, "session/set_mode": true, "session/set_model": true,
	"authenticate": true, "logout": true,
}

// v2In maps the message m of a v2 client, of method, in place to what
// the handlers take; it reports whether it changed anything.
func v2In(m map[string]json.RawMessage, method string) bool {
	var params map[string]json.RawMessage
	if len(m["params"]) > 0 && json.Unmarshal(m["params"], &params) != nil {
		return false
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	rename := func(to string) { m["method"], _ = json.Marshal(to) }
	switch {
	case method == "initialize":
		initializeIn(params)
	case method == "session/new":
		mcpServersIn(params)
	case method == "session/resume":
		mcpServersIn(params)
		switch replay := replayFromIn(params); replay {
		case "":
		case "start":
			rename("session/load") // replays, then answers
		default:
			rename(extReplayRefused)
		}
	case method == "session/prompt":
		rename(extPromptV2)
	case v2Removed[method]:
		rename("_loom/v2/removed/" + method)
	default:
		return false
	}
	m["params"], _ = json.Marshal(params)
	return true
}

// initializeIn: v2's {protocolVersion, info, capabilities} as v1's
// {protocolVersion, clientInfo, clientCapabilities}. A v2 client has no
// fs/terminal methods (v2 removed them: the agent reads and writes the
// disk itself) and understands plan_update (v2's only plan update), so
// the plan capability is declared for it.
func initializeIn(params map[string]json.RawMessage) {
	params["protocolVersion"] = json.RawMessage("1")
	if info, ok := params["info"]; ok {
		params["clientInfo"] = info
		delete(params, "info")
	}
	delete(params, "capabilities")
	params["clientCapabilities"] = json.RawMessage("{}")
	meta := map[string]json.RawMessage{}
	if len(params["_meta"]) > 0 {
		_ = json.Unmarshal(params["_meta"], &meta)
	}
	meta[metaPlanCapability] = json.RawMessage("{}")
	params["_meta"], _ = json.Marshal(meta)
}

// mcpServersIn: v2's mcpServers may be omitted, and its stdio server
// says "type":"stdio", which v1's has not.
func mcpServersIn(params map[string]json.RawMessage) {
	var servers []map[string]json.RawMessage
	if len(params["mcpServers"]) > 0 {
		_ = json.Unmarshal(params["mcpServers"], &servers)
	}
	if servers == nil {
		servers = []map[string]json.RawMessage{}
	}
	for _, s := range servers {
		if string(s["type"]) == `"stdio"` {
			delete(s, "type")
		}
	}
	params["mcpServers"], _ = json.Marshal(servers)
}

// replayFromIn takes replayFrom out of session/resume's params and
// returns its type: "" for none (omitted or null), "start", or the
// unserved cursor's type ("?" when malformed).
func replayFromIn(params map[string]json.RawMessage) string {
	raw, ok := params["replayFrom"]
	delete(params, "replayFrom")
	if !ok || string(raw) == "null" {
		return ""
	}
	var cursor struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &cursor) != nil || cursor.Type == "" {
		params["_meta"], _ = json.Marshal(map[string]json.RawMessage{"loom.wire/replayFrom": raw})
		return "?"
	}
	if cursor.Type != "start" {
		params["_meta"], _ = json.Marshal(map[string]json.RawMessage{"loom.wire/replayFrom": raw})
	}
	return cursor.Type
}

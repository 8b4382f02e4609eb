package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// What the handlers wrote, as ACP v2 says it (see protocol.go). Names
// from @agentclientprotocol/sdk 2.4.0 schema/v2/schema.json.

// chunkRun is the synthetic messageId of a session's run of chunks that
// came without one (v2's ContentChunk requires one): one per run of the
// same kind, a new one when anything else came between.
type chunkRun struct {
	kind string // the sessionUpdate of the run, "" after anything else
	n    int
}

// v2Out maps one message (a JSON-RPC line) to v2; nil drops it.
func (p *protocol) v2Out(b []byte) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(b, &msg) != nil {
		return b
	}
	var method string
	_ = json.Unmarshal(msg["method"], &method)
	changed := true
	switch {
	case method == "session/update":
		changed = p.updateOut(msg)
		if msg["params"] == nil {
			return nil
		}
	case method == "session/request_permission":
		changed = permissionOut(msg)
	case method == "" && msg["result"] != nil:
		changed = resultOut(msg)
	default:
		changed = false
	}
	if !changed {
		return b
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return b
	}
	if bytes.HasSuffix(b, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

// resultOut maps a response's result: the initialize response as v2's
// {protocolVersion, info, capabilities}; session/new, resume and
// set_config_option's configOptions as v2's (configId); v1's modes and
// models dropped (v2 has config options only).
func resultOut(msg map[string]json.RawMessage) bool {
	var result map[string]json.RawMessage
	if json.Unmarshal(msg["result"], &result) != nil || result == nil {
		return false
	}
	changed := false
	if info, ok := result["agentInfo"]; ok && result["agentCapabilities"] != nil {
		result = map[string]json.RawMessage{
			"protocolVersion": json.RawMessage("2"),
			"info":            info,
			"capabilities":    json.RawMessage(v2AgentCapabilities),
		}
		changed = true
	}
	for _, k := range []string{"modes", "models"} {
		if _, ok := result[k]; ok {
			delete(result, k)
			changed = true
		}
	}
	if opts, ok := result["configOptions"]; ok {
		result["configOptions"] = configOptionsOut(opts)
		changed = true
	}
	if changed {
		msg["result"], _ = json.Marshal(result)
	}
	return changed
}

// v2AgentCapabilities is what loom serves of v2: the baseline session
// methods ({} under session), prompts with images and embedded context,
// MCP servers over stdio and HTTP, session/delete and additional
// (read-only) directories. No authMethods: there is no auth/login.
const v2AgentCapabilities = `{"session":{"prompt":{"image":{},"embeddedContext":{}},"mcp":{"stdio":{},"http":{}},"delete":{},"additionalDirectories":{}}}`

// configOptionsOut renames each option's v1 "id" to v2's "configId".
func configOptionsOut(raw json.RawMessage) json.RawMessage {
	var opts []map[string]json.RawMessage
	if json.Unmarshal(raw, &opts) != nil {
		return raw
	}
	for _, o := range opts {
		if id, ok := o["id"]; ok {
			o["configId"] = id
			delete(o, "id")
		}
	}
	out, err := json.Marshal(opts)
	if err != nil {
		return raw
	}
	return out
}

// permissionOut maps session/request_permission's v1 {sessionId,
// toolCall, options} to v2's {sessionId, title, subject: {type:
// "tool_call", toolCall}, options}.
func permissionOut(msg map[string]json.RawMessage) bool {
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || params["toolCall"] == nil {
		return false
	}
	var call map[string]json.RawMessage
	if json.Unmarshal(params["toolCall"], &call) != nil {
		return false
	}
	toolCallOut(call)
	title := call["title"]
	if title == nil || string(title) == "null" {
		title = json.RawMessage(`"Permission"`)
	}
	subject, _ := json.Marshal(map[string]any{"type": "tool_call", "toolCall": call})
	delete(params, "toolCall")
	params["title"], params["subject"] = title, subject
	msg["params"], _ = json.Marshal(params)
	return true
}

// toolCallOut maps a v1 tool call's fields to v2's ToolCallUpdate in
// place: its diffs (v1 {path, oldText, newText}) as v2's {changes,
// patch}.
func toolCallOut(call map[string]json.RawMessage) {
	var content []map[string]json.RawMessage
	if json.Unmarshal(call["content"], &content) != nil || content == nil {
		return
	}
	for i, c := range content {
		if string(c["type"]) == `"diff"` {
			content[i] = diffOut(c)
		}
	}
	call["content"], _ = json.Marshal(content)
}

// diffOut is a v1 diff as v2's: one change (add when v1 had no old
// text, else modify) and the change as a git patch.
func diffOut(c map[string]json.RawMessage) map[string]json.RawMessage {
	var d struct {
		Path    string  `json:"path"`
		OldText *string `json:"oldText"`
		NewText string  `json:"newText"`
	}
	if json.Unmarshal(mustJSON(c), &d) != nil {
		return c
	}
	op, old := "modify", ""
	if d.OldText == nil {
		op = "add"
	} else {
		old = *d.OldText
	}
	out := map[string]any{
		"type":    "diff",
		"changes": []map[string]any{{"operation": op, "path": d.Path}},
		"patch":   map[string]any{"format": "git_patch", "text": gitPatch(d.Path, old, d.NewText, d.OldText == nil)},
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(mustJSON(out), &m)
	return m
}

// mustJSON marshals v, which cannot fail (maps of JSON values).
func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// updateOut maps one session/update's update in place; it sets params
// to nil to drop it. It reports whether it changed anything.
func (p *protocol) updateOut(msg map[string]json.RawMessage) bool {
	var params struct {
		SessionID string                     `json:"sessionId"`
		Update    map[string]json.RawMessage `json:"update"`
		Meta      json.RawMessage            `json:"_meta,omitempty"`
	}
	if json.Unmarshal(msg["params"], &params) != nil || params.Update == nil {
		return false
	}
	var kind string
	_ = json.Unmarshal(params.Update["sessionUpdate"], &kind)
	keep := p.mapUpdate(params.SessionID, kind, params.Update)
	if !keep {
		msg["params"] = nil
		return true
	}
	msg["params"], _ = json.Marshal(params)
	return true
}

// mapUpdate maps update u, of kind, of session id, to v2 in place; false
// drops it. Each v1 update loom sends is mapped here, once:
//
//   - the message chunks keep their messageId (required in v2; a run of
//     chunks without one gets one of its own);
//   - tool_call (v1's create) and tool_call_update are v2's upserted
//     tool_call_update, diffs mapped;
//   - available_commands_update's commands are {type: "command"};
//     config_option_update's options name configId;
//   - plan (v1's legacy todo list), plan_removed, current_mode_update and
//     the subagents' updates have no v2 form: dropped (a v2 client gets
//     plan_update, and modes as the "mode" config option);
//   - state_update, user_message, plan_update, session_info_update,
//     usage_update go out as they are.
func (p *protocol) mapUpdate(id, kind string, u map[string]json.RawMessage) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.chunks == nil {
		p.chunks = map[string]chunkRun{}
	}
	run := p.chunks[id]
	isChunk := kind == "user_message_chunk" || kind == "agent_message_chunk" || kind == "agent_thought_chunk"
	if !isChunk || u["messageId"] != nil {
		run.kind = ""
	}
	p.chunks[id] = run
	switch kind {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk":
		if u["messageId"] == nil || string(u["messageId"]) == "null" {
			if run.kind != kind {
				run.kind, run.n = kind, run.n+1
				p.chunks[id] = run
			}
			u["messageId"], _ = json.Marshal(fmt.Sprintf("%s-%s-%d", id, chunkPrefix[kind], run.n))
		}
	case "tool_call", "tool_call_update":
		u["sessionUpdate"] = json.RawMessage(`"tool_call_update"`)
		toolCallOut(u)
	case "available_commands_update":
		var cmds []map[string]json.RawMessage
		if json.Unmarshal(u["availableCommands"], &cmds) == nil {
			for _, c := range cmds {
				c["type"] = json.RawMessage(`"command"`)
			}
			u["availableCommands"], _ = json.Marshal(cmds)
		}
	case "config_option_update":
		u["configOptions"] = configOptionsOut(u["configOptions"])
	case "state_update", "user_message", "plan_update", "session_info_update", "usage_update":
	default:
		return false
	}
	return true
}

// chunkPrefix names the synthetic message ids of chunks by kind.
var chunkPrefix = map[string]string{
	"user_message_chunk":  "user",
	"agent_message_chunk": "agent",
	"agent_thought_chunk": "thought",
}

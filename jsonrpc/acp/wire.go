package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// What the ACP schema made stable after acp-go-sdk v0.13.0 (the newest
// the module proxy serves), kept here, small, apart from the SDK's types
// so that an upgrade only deletes it:
//
//   - session/delete (schema 1.7.0, agent-client-protocol-schema
//     v1/agent.rs DeleteSessionRequest, capability
//     sessionCapabilities.delete): the SDK dispatches only the methods it
//     knows, so deleteReader renames the method to an extension method
//     the agent handles (HandleExtensionMethod), and capsWriter adds the
//     capability to the initialize response.
//   - SessionInfo.additionalDirectories must be present, "[]" when a
//     session has none, once the agent advertises the capability (RFD
//     "Additional Workspace Roots", stabilized June 2026); the SDK's
//     field is omitempty, so listRoots adds it to session/list results.

// methodSessionDelete is session/delete, and extSessionDelete the
// extension method deleteReader hands it to the SDK as.
const (
	methodSessionDelete = "session/delete"
	extSessionDelete    = "_loom/session/delete"
)

// deleteSessionRequest is session/delete's params (schema 1.7.0); the
// response is an empty object.
type deleteSessionRequest struct {
	SessionID acpsdk.SessionId `json:"sessionId"`
	Meta      map[string]any   `json:"_meta,omitempty"`
}

// deleteReader passes the client's messages on, line by line, renaming
// session/delete requests to extSessionDelete.
type deleteReader struct {
	r *bufio.Reader
	// pre maps each line first: the connection's protocol (protocol.in).
	pre     func([]byte) []byte
	pending []byte
	err     error
}

func newDeleteReader(r io.Reader, pre func([]byte) []byte) io.Reader {
	return &deleteReader{r: bufio.NewReaderSize(r, 64<<10), pre: pre}
}

// extSessionUpdate is the extension notification a session update the
// SDK's types lack (plan_update, plan_removed) is sent as; capsWriter
// renames it session/update on its way out.
const extSessionUpdate = "_loom/session/update"

func (d *deleteReader) Read(p []byte) (int, error) {
	for len(d.pending) == 0 {
		if d.err != nil {
			return 0, d.err
		}
		line, err := d.r.ReadBytes('\n')
		if d.pre != nil {
			line = d.pre(line)
		}
		d.pending, d.err = renameDelete(line), err
	}
	n := copy(p, d.pending)
	d.pending = d.pending[n:]
	return n, nil
}

// renameDelete returns line with a request the SDK does not know made
// one it hands on: session/delete, session/rewind and
// session/edit_prompt renamed to extension methods (renamedMethods), the
// members of the newer schema the SDK's types lack moved into the
// params' _meta (movedMembers); any other line unchanged.
func renameDelete(line []byte) []byte {
	return rewriteRequest(line, func(m map[string]json.RawMessage, method string) bool {
		changed := false
		if ext, ok := renamedMethods[method]; ok {
			m["method"], _ = json.Marshal(ext)
			changed = true
		}
		if moves, ok := movedMembers[method]; ok {
			if params, ok := moveToMeta(m["params"], moves); ok {
				m["params"] = params
				changed = true
			}
		}
		return changed
	})
}

// rewriteRequest returns line, a client's message, rewritten by edit
// when it is a request or notification (it has a method) and edit
// changed its members (it reports whether it did); any other line, or
// one that does not parse, unchanged. A final newline is kept.
func rewriteRequest(line []byte, edit func(m map[string]json.RawMessage, method string) (changed bool)) []byte {
	if !bytes.Contains(line, []byte(`"method"`)) {
		return line
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	var method string
	if json.Unmarshal(m["method"], &method) != nil {
		return line
	}
	if !edit(m, method) {
		return line
	}
	out, err := json.Marshal(m)
	if err != nil {
		return line
	}
	if bytes.HasSuffix(line, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

// renamedMethods are the client's methods the SDK does not dispatch, and
// the extension methods the agent handles them as (HandleExtensionMethod).
var renamedMethods = map[string]string{
	methodSessionDelete: extSessionDelete,
	methodSessionRewind: extSessionRewind,
	methodEditPrompt:    extEditPrompt,
}

// A member of a request's params the SDK's types lack, by its path from
// the params (one or two names), moved to the params' _meta under key.
type movedMember struct {
	path []string
	key  string
}

// The _meta keys the moved members are read from.
const (
	metaPlanCapability = "loom.wire/clientCapabilities.plan"
	metaSystemPrompt   = "loom.wire/systemPrompt"
)

// movedMembers are the newer schema's members, by method.
var movedMembers = map[string][]movedMember{
	"initialize": {{path: []string{"clientCapabilities", "plan"}, key: metaPlanCapability},
		{path: []string{"clientCapabilities", "subagents"}, key: metaSubagentsCapability}},
	"session/new":    {{path: []string{"systemPrompt"}, key: metaSystemPrompt}},
	"session/load":   {{path: []string{"systemPrompt"}, key: metaSystemPrompt}},
	"session/resume": {{path: []string{"systemPrompt"}, key: metaSystemPrompt}},
}

// moveToMeta moves the members moves name from params into its _meta;
// it reports whether it moved any.
func moveToMeta(raw json.RawMessage, moves []movedMember) (json.RawMessage, bool) {
	var params map[string]json.RawMessage
	if json.Unmarshal(raw, &params) != nil || params == nil {
		return raw, false
	}
	meta := map[string]json.RawMessage{}
	if len(params["_meta"]) > 0 && json.Unmarshal(params["_meta"], &meta) != nil {
		return raw, false
	}
	moved := false
	for _, mv := range moves {
		holder, name := params, mv.path[0]
		var inner map[string]json.RawMessage
		if len(mv.path) == 2 {
			if json.Unmarshal(params[mv.path[0]], &inner) != nil || inner == nil {
				continue
			}
			holder, name = inner, mv.path[1]
		}
		v, ok := holder[name]
		if !ok {
			continue
		}
		delete(holder, name)
		meta[mv.key] = v
		if inner != nil {
			params[mv.path[0]], _ = json.Marshal(inner)
		}
		moved = true
	}
	if !moved {
		return raw, false
	}
	params["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(params)
	if err != nil {
		return raw, false
	}
	return out, true
}

// metaMember decodes the moved member key of a request's _meta into v;
// it reports whether the request had it (and not as null).
func metaMember(meta map[string]any, key string, v any) (bool, error) {
	x, ok := meta[key]
	if !ok || x == nil {
		return false, nil
	}
	b, err := json.Marshal(x)
	if err != nil {
		return true, err
	}
	return true, json.Unmarshal(b, v)
}

// capsWriter passes what the SDK writes (one whole message per Write) on,
// adding the capabilities of what the SDK lacks to the initialize
// response (addCapabilities), and renaming extSessionUpdate.
type capsWriter struct {
	out  io.Writer
	done bool
}

func (c *capsWriter) Write(b []byte) (int, error) {
	if head := b[:min(len(b), 80)]; bytes.Contains(head, []byte(`"method":"`+extSessionUpdate+`"`)) {
		nb := bytes.Replace(b, []byte(`"method":"`+extSessionUpdate+`"`), []byte(`"method":"session/update"`), 1)
		if _, err := c.out.Write(nb); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	if nb := listRoots(b); nb != nil {
		if _, err := c.out.Write(nb); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	if !c.done && bytes.Contains(b, []byte(`"agentCapabilities"`)) {
		if nb := addCapabilities(b); nb != nil {
			c.done = true
			if _, err := c.out.Write(nb); err != nil {
				return 0, err
			}
			return len(b), nil
		}
	}
	return c.out.Write(b)
}

// HandleExtensionMethod implements acpsdk.ExtensionMethodHandler: the
// stable methods the SDK lacks, renamed by deleteReader.
func (a *agent) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if r, handled, err := (rewinds{a}).handleRewind(ctx, method, params); handled {
		return r, err
	}
	switch method {
	case extPromptV2:
		return a.promptV2(ctx, params)
	case extReplayRefused:
		return nil, invalidParams("session/resume: replayFrom %s is not served (loom replays from {\"type\":\"start\"} only)", metaRaw(params, "loom.wire/replayFrom"))
	case extSessionDelete:
		var p deleteSessionRequest
		if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
			return nil, invalidParams("session/delete needs {sessionId}")
		}
		return struct{}{}, a.deleteSession(ctx, p.SessionID)
	}
	return nil, acpsdk.NewMethodNotFound(strings.TrimPrefix(method, "_loom/v2/removed/"))
}

// metaRaw is the JSON of member key of params' _meta, "null" when absent.
func metaRaw(params json.RawMessage, key string) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta[key] == nil {
		return "null"
	}
	return string(p.Meta[key])
}

// deleteSession implements session/delete: the conversation is closed if
// open and its journal goes to the trash (workspace.Folder.Delete); it is
// no longer listed nor loadable.
func (a *agent) deleteSession(ctx context.Context, id acpsdk.SessionId) error {
	a.mu.Lock()
	s := a.sessions[id]
	delete(a.sessions, id)
	if s != nil && a.recent[s.folder] == s {
		delete(a.recent, s.folder)
	}
	a.mu.Unlock()
	folder := ""
	if s != nil {
		folder = s.folder
	} else {
		all, err := a.host.Conversations("")
		if err != nil {
			return err
		}
		for _, c := range all {
			if c.ID == string(id) {
				folder = c.Folder
			}
		}
	}
	if folder == "" {
		return invalidParams("unknown session %q", id)
	}
	f, err := a.host.OpenFolder(folder)
	if err != nil {
		return err
	}
	switch err := f.Delete(string(id)); {
	case errors.Is(err, workspace.ErrUnknownConversation):
		return invalidParams("unknown session %q", id)
	case errors.Is(err, workspace.ErrOpenElsewhere):
		return invalidParams("session %q is open in another loom process", id)
	case err != nil:
		return err
	}
	a.log.Info("session/delete", "session", id)
	return nil
}

// listRoots returns the message b with "additionalDirectories":[] added
// to each session of a session/list result that lacks it; nil when b is
// not such a result or needs nothing.
func listRoots(b []byte) []byte {
	if !bytes.Contains(b, []byte(`"sessions":[{`)) || !bytes.Contains(b, []byte(`"result"`)) {
		return nil
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(b, &msg) != nil || msg["method"] != nil {
		return nil
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(msg["result"], &result) != nil {
		return nil
	}
	var sessions []map[string]json.RawMessage
	if json.Unmarshal(result["sessions"], &sessions) != nil {
		return nil
	}
	changed := false
	for _, s := range sessions {
		if _, ok := s["sessionId"]; ok && s["additionalDirectories"] == nil {
			s["additionalDirectories"] = json.RawMessage("[]")
			changed = true
		}
	}
	if !changed {
		return nil
	}
	var err error
	if result["sessions"], err = json.Marshal(sessions); err != nil {
		return nil
	}
	if msg["result"], err = json.Marshal(result); err != nil {
		return nil
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return nil
	}
	if bytes.HasSuffix(b, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

// The capabilities addCapabilities adds: session/delete (stable), the
// client's system prompt in both modes (sessionCapabilities.systemPrompt,
// schema 1.30), and the Session Rewind draft's session/rewind and
// session/edit_prompt (agentCapabilities.rewindSession, RFD PR #1214).
var (
	addedSessionCaps = map[string]any{
		"delete":       map[string]any{},
		"systemPrompt": map[string]any{"mode": map[string]any{"override": map[string]any{}}},
	}
	addedAgentCaps = map[string]any{
		"rewindSession": map[string]any{"supported": true, "supportsEditPrompt": true},
	}
)

// addCapabilities returns the initialize response b with the added
// capabilities; nil when b is not that response.
func addCapabilities(b []byte) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(b, &msg) != nil || msg["method"] != nil || msg["result"] == nil {
		return nil
	}
	var result map[string]any
	if json.Unmarshal(msg["result"], &result) != nil {
		return nil
	}
	caps, ok := result["agentCapabilities"].(map[string]any)
	if !ok {
		return nil
	}
	sc, _ := caps["sessionCapabilities"].(map[string]any)
	if sc == nil {
		sc = map[string]any{}
	}
	for k, v := range addedSessionCaps {
		sc[k] = v
	}
	caps["sessionCapabilities"] = sc
	for k, v := range addedAgentCaps {
		caps[k] = v
	}
	var err error
	if msg["result"], err = json.Marshal(result); err != nil {
		return nil
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return nil
	}
	if bytes.HasSuffix(b, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

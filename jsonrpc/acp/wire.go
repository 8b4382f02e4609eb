package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

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
	r       *bufio.Reader
	pending []byte
	err     error
}

func newDeleteReader(r io.Reader) io.Reader { return &deleteReader{r: bufio.NewReaderSize(r, 64<<10)} }

func (d *deleteReader) Read(p []byte) (int, error) {
	for len(d.pending) == 0 {
		if d.err != nil {
			return 0, d.err
		}
		line, err := d.r.ReadBytes('\n')
		d.pending, d.err = renameDelete(line), err
	}
	n := copy(p, d.pending)
	d.pending = d.pending[n:]
	return n, nil
}

// renameDelete returns line with a session/delete request's method
// renamed; any other line unchanged.
func renameDelete(line []byte) []byte {
	if !bytes.Contains(line, []byte(`"`+methodSessionDelete+`"`)) {
		return line
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	var method string
	if json.Unmarshal(m["method"], &method) != nil || method != methodSessionDelete {
		return line
	}
	m["method"], _ = json.Marshal(extSessionDelete)
	out, err := json.Marshal(m)
	if err != nil {
		return line
	}
	if bytes.HasSuffix(line, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

// capsWriter passes what the SDK writes (one whole message per Write) on,
// adding sessionCapabilities.delete to the initialize response.
type capsWriter struct {
	out  io.Writer
	done bool
}

func (c *capsWriter) Write(b []byte) (int, error) {
	if nb := listRoots(b); nb != nil {
		if _, err := c.out.Write(nb); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	if !c.done {
		key := []byte(`"sessionCapabilities":{`)
		if i := bytes.Index(b, key); i >= 0 && bytes.Contains(b, []byte(`"agentCapabilities"`)) {
			c.done = true
			at := i + len(key)
			add := `"delete":{},`
			if at < len(b) && b[at] == '}' {
				add = `"delete":{}`
			}
			nb := make([]byte, 0, len(b)+len(add))
			nb = append(append(append(nb, b[:at]...), add...), b[at:]...)
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
	switch method {
	case extSessionDelete:
		var p deleteSessionRequest
		if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
			return nil, invalidParams("session/delete needs {sessionId}")
		}
		return struct{}{}, a.deleteSession(ctx, p.SessionID)
	}
	return nil, acpsdk.NewMethodNotFound(method)
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

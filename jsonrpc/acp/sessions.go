package acp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// folderSession checks cwd and returns the workspace session of that
// folder, starting it if needed.
func (a *agent) folderSession(cwd string, mcpServers []acpsdk.McpServer) (*workspace.Session, error) {
	if !filepath.IsAbs(cwd) {
		return nil, invalidParams("cwd %q is not an absolute path", cwd)
	}
	a.useMCPServers(mcpServers)
	ws, err := a.host.AddFolder(cwd)
	if err != nil {
		return nil, invalidParams("cwd: %v", err)
	}
	return ws, nil
}

// makeLive records that the ACP session id holds ws's live conversation
// and returns it. A session already known keeps its "always" answers.
func (a *agent) makeLive(id acpsdk.SessionId, ws *workspace.Session) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok || s.ws != ws {
		s = &session{id: id, folder: ws.Path(), ws: ws, always: map[string]bool{}}
		a.sessions[id] = s
	}
	a.live[ws.Path()] = s
	return s
}

// conversationID returns the id of ws's live conversation: its journal's,
// or one made up for this process when it is not journaled.
func (a *agent) conversationID(ctx context.Context, ws *workspace.Session) (acpsdk.SessionId, error) {
	c, err := ws.Conversation(ctx)
	if err != nil {
		return "", err
	}
	if c.ID != "" {
		return acpsdk.SessionId(c.ID), nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.live[ws.Path()]; s != nil && s.ws == ws {
		return s.id, nil
	}
	a.unjournaled++
	return acpsdk.SessionId(fmt.Sprintf("loom-unjournaled-%d-%d", time.Now().UnixNano(), a.unjournaled)), nil
}

// NewSession implements acpsdk.Agent: a new conversation on the folder
// cwd. The folder's previous conversation (and the turn it may be
// running, which is cancelled) is set aside in its journal.
func (a *agent) NewSession(ctx context.Context, p acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	ws, err := a.folderSession(p.Cwd, p.McpServers)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	if err := ws.Reset(ctx); err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	a.mu.Lock()
	if old := a.live[ws.Path()]; old != nil && old.ws == ws {
		delete(a.live, ws.Path()) // an unjournaled conversation gets a new id
	}
	a.mu.Unlock()
	id, err := a.conversationID(ctx, ws)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	a.makeLive(id, ws)
	a.advertiseCommands(id)
	a.log.Info("session/new", "session", id, "cwd", ws.Path())
	return acpsdk.NewSessionResponse{SessionId: id}, nil
}

// restore makes the conversation id of cwd the folder's live one.
func (a *agent) restore(ctx context.Context, id acpsdk.SessionId, cwd string, mcpServers []acpsdk.McpServer) (*session, error) {
	ws, err := a.folderSession(cwd, mcpServers)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	known := a.sessions[id]
	a.mu.Unlock()
	if known != nil && known.ws == ws && a.isLive(known) {
		return known, nil
	}
	if err := ws.LoadConversation(ctx, string(id)); err != nil {
		if errors.Is(err, workspace.ErrUnknownConversation) {
			return nil, invalidParams("unknown session %q for cwd %s", id, cwd)
		}
		return nil, err
	}
	return a.makeLive(id, ws), nil
}

// LoadSession implements acpsdk.AgentLoader: the conversation is restored
// from its journal and replayed to the client as session/update
// notifications (the prompts, the answers, each tool call and its final
// state) before the response.
func (a *agent) LoadSession(ctx context.Context, p acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	s, err := a.restore(ctx, p.SessionId, p.Cwd, p.McpServers)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	msgs, err := s.ws.History(ctx)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	for _, u := range historyUpdates(s.folder, msgs) {
		a.out.update(s.id, u)
	}
	a.advertiseCommands(s.id)
	if err := a.out.flush(ctx); err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	a.log.Info("session/load", "session", s.id, "cwd", s.folder, "messages", len(msgs))
	return acpsdk.LoadSessionResponse{}, nil
}

// ResumeSession implements acpsdk.Agent: like session/load, without the
// replay.
func (a *agent) ResumeSession(ctx context.Context, p acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	s, err := a.restore(ctx, p.SessionId, p.Cwd, p.McpServers)
	if err != nil {
		return acpsdk.ResumeSessionResponse{}, err
	}
	a.advertiseCommands(s.id)
	a.log.Info("session/resume", "session", s.id, "cwd", s.folder)
	return acpsdk.ResumeSessionResponse{}, nil
}

// ListSessions implements acpsdk.Agent: the journaled conversations of
// cwd (of every folder without one) that have a prompt, most recent
// first, in one page.
func (a *agent) ListSessions(_ context.Context, p acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	folder := ""
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return acpsdk.ListSessionsResponse{}, invalidParams("cwd %q is not an absolute path", *p.Cwd)
		}
		folder = *p.Cwd
	}
	convs, err := a.host.Conversations(folder)
	if err != nil {
		return acpsdk.ListSessionsResponse{}, invalidParams("cwd: %v", err)
	}
	out := acpsdk.ListSessionsResponse{Sessions: []acpsdk.SessionInfo{}}
	for _, c := range convs {
		if c.Title == "" {
			continue
		}
		out.Sessions = append(out.Sessions, acpsdk.SessionInfo{
			SessionId: acpsdk.SessionId(c.ID),
			Cwd:       c.Folder,
			Title:     acpsdk.Ptr(c.Title),
			UpdatedAt: acpsdk.Ptr(c.Updated.UTC().Format(time.RFC3339)),
		})
	}
	return out, nil
}

func (a *agent) isLive(s *session) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.live[s.folder] == s
}

// liveSession returns the ACP session id, which must hold its folder's
// live conversation.
func (a *agent) liveSession(id acpsdk.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok {
		return nil, invalidParams("unknown session %q: create it with session/new, or restore it with session/load or session/resume", id)
	}
	if a.live[s.folder] != s {
		return nil, invalidParams("session %q is no longer the live conversation of %s (a later session/new or session/load replaced it); restore it with session/load or session/resume", id, s.folder)
	}
	return s, nil
}

// liveIn returns the ACP session holding folder's live conversation.
func (a *agent) liveIn(folder string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.live[folder]
}

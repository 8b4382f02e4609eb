package acp

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// folderOf checks cwd and returns its workspace folder, opening it if
// needed (without opening any of its conversations).
func (a *agent) folderOf(cwd string, mcpServers []acpsdk.McpServer) (*workspace.Folder, error) {
	if !filepath.IsAbs(cwd) {
		return nil, invalidParams("cwd %q is not an absolute path", cwd)
	}
	a.useMCPServers(mcpServers)
	f, err := a.host.OpenFolder(cwd)
	if err != nil {
		return nil, invalidParams("cwd: %v", err)
	}
	return f, nil
}

// register records the ACP session id of conversation c and returns it.
// A session already known keeps its "always" answers.
func (a *agent) register(id acpsdk.SessionId, c *workspace.Conversation) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.registerLocked(id, c)
}

// registerNew records the session id of a conversation session/new
// made, holding every update for it (from this moment: the conversation
// runs already, and a folder's notice may come any time) until the
// response that names it to the client was written.
func (a *agent) registerNew(id acpsdk.SessionId, c *workspace.Conversation) *session {
	a.mu.Lock()
	release := a.updates.holdLocked(id)
	s := a.registerLocked(id, c)
	a.mu.Unlock()
	a.watch.after(string(id), release)
	return s
}

// registerLocked is register with a.mu held.
func (a *agent) registerLocked(id acpsdk.SessionId, c *workspace.Conversation) *session {
	s, ok := a.sessions[id]
	if !ok || s.ws != c {
		s = &session{id: id, folder: c.Folder().Path(), ws: c, always: map[string]bool{}}
		a.sessions[id] = s
	}
	a.recent[s.folder] = s
	return s
}

// NewSession implements acpsdk.Agent: a new conversation on the folder
// cwd, beside the others (of this client, of other clients, of other loom
// processes), which go on as they are.
func (a *agent) NewSession(ctx context.Context, p acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	prompt, err := clientPromptOf(p.Meta)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	f, err := a.folderOf(p.Cwd, p.McpServers)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	c, err := f.New()
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	id := acpsdk.SessionId(c.ID())
	s := a.registerNew(id, c)
	if registeredForTest != nil {
		registeredForTest(a, s)
	}
	err = a.setRoots(ctx, s, p.AdditionalDirectories)
	if err == nil {
		err = a.setClientPrompt(ctx, s, prompt)
	}
	if err != nil {
		a.forget(id)
		f.CloseConversation(c.ID())
		return acpsdk.NewSessionResponse{}, err
	}
	a.log.Info("session/new", "session", id, "cwd", c.Folder().Path())
	a.commands.advertise(id, c)
	m, err := a.stateOf(ctx, id, c, true)
	if err != nil {
		a.forget(id)
		f.CloseConversation(c.ID())
		return acpsdk.NewSessionResponse{}, err
	}
	return acpsdk.NewSessionResponse{SessionId: id, Models: m.state, Modes: m.modes, ConfigOptions: m.options}, nil
}

// restore opens the conversation id of cwd, leaving the folder's other
// conversations as they are.
func (a *agent) restore(ctx context.Context, id acpsdk.SessionId, cwd string, mcpServers []acpsdk.McpServer) (*session, error) {
	f, err := a.folderOf(cwd, mcpServers)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	known := a.sessions[id]
	a.mu.Unlock()
	if known != nil && known.folder == f.Path() && !closed(known.ws) {
		return known, nil
	}
	c, err := f.Conversation(string(id))
	switch {
	case errors.Is(err, workspace.ErrUnknownConversation):
		return nil, invalidParams("unknown session %q for cwd %s", id, cwd)
	case errors.Is(err, workspace.ErrOpenElsewhere):
		return nil, invalidParams("session %q is open in another loom process; it can be loaded once that one closes it", id)
	case err != nil:
		return nil, err
	}
	if openedForTest != nil {
		openedForTest(c)
	}
	return a.register(id, c), nil
}

// registeredForTest, set by a test, runs in session/new right after
// the session is registered, before its response is written.
var registeredForTest func(*agent, *session)

// openedForTest, set by a test, runs between the opening of a
// conversation for session/load or session/resume and the registration
// of its session: the conversation's goroutine may run ahead there.
var openedForTest func(*workspace.Conversation)

// closed reports whether conversation c has shut down.
func closed(c *workspace.Conversation) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// CloseSession implements acpsdk.Agent: session/close closes the
// session's conversation (its turn in flight is cancelled); its journal
// stays, listed and loadable.
func (a *agent) CloseSession(_ context.Context, p acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	a.mu.Lock()
	s := a.sessions[p.SessionId]
	delete(a.sessions, p.SessionId)
	if s != nil && a.recent[s.folder] == s {
		delete(a.recent, s.folder)
	}
	a.mu.Unlock()
	if s == nil {
		return acpsdk.CloseSessionResponse{}, invalidParams("unknown session %q", p.SessionId)
	}
	if f, err := a.host.Folder(s.folder); err == nil {
		f.CloseConversation(s.ws.ID())
	}
	a.log.Info("session/close", "session", p.SessionId)
	return acpsdk.CloseSessionResponse{}, nil
}

// LoadSession implements acpsdk.AgentLoader: the conversation is restored
// from its journal and replayed to the client as session/update
// notifications (the prompts, the answers, each tool call and its final
// state) before the response.
func (a *agent) LoadSession(ctx context.Context, p acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	// What the session is told while its history is replayed (the
	// journal's "resumed" notice, a folder's notice, a running turn's
	// text) waits behind the replay.
	prompt, err := clientPromptOf(p.Meta)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	release := a.updates.holdForReplay(p.SessionId)
	deliver := a.openings.catch(p.SessionId)
	s, err := a.restore(ctx, p.SessionId, p.Cwd, p.McpServers)
	if err == nil {
		err = a.setRoots(ctx, s, p.AdditionalDirectories)
	}
	if err == nil {
		err = a.setClientPrompt(ctx, s, prompt)
	}
	if err != nil {
		deliver(nil)
		release()
		return acpsdk.LoadSessionResponse{}, err
	}
	// History is answered by the conversation's goroutine once it has
	// opened: what it said while opening was caught by then.
	msgs, err := s.ws.History(ctx)
	deliver(s) // held behind the replay
	if err != nil {
		release()
		return acpsdk.LoadSessionResponse{}, err
	}
	for _, u := range historyUpdates(s.folder, msgs) {
		a.out.update(s.id, u)
	}
	a.commands.advertise(s.id, s.ws)
	release()
	if err := a.out.flush(ctx); err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	a.log.Info("session/load", "session", s.id, "cwd", s.folder, "messages", len(msgs))
	m, err := a.stateOf(ctx, s.id, s.ws, true)
	if err == nil {
		err = a.restored(ctx, s)
	}
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	return acpsdk.LoadSessionResponse{Models: m.state, Modes: m.modes, ConfigOptions: m.options}, nil
}

// ResumeSession implements acpsdk.Agent: like session/load, without the
// replay.
func (a *agent) ResumeSession(ctx context.Context, p acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	prompt, err := clientPromptOf(p.Meta)
	if err != nil {
		return acpsdk.ResumeSessionResponse{}, err
	}
	deliver := a.openings.catch(p.SessionId)
	s, err := a.restore(ctx, p.SessionId, p.Cwd, p.McpServers)
	if err == nil {
		err = a.setRoots(ctx, s, p.AdditionalDirectories)
	}
	if err == nil {
		err = a.setClientPrompt(ctx, s, prompt)
	}
	if err != nil {
		deliver(nil)
		return acpsdk.ResumeSessionResponse{}, err
	}
	deliver(s)
	a.commands.advertise(s.id, s.ws)
	a.log.Info("session/resume", "session", s.id, "cwd", s.folder)
	m, err := a.stateOf(ctx, s.id, s.ws, true)
	if err == nil {
		err = a.restored(ctx, s)
	}
	if err != nil {
		return acpsdk.ResumeSessionResponse{}, err
	}
	return acpsdk.ResumeSessionResponse{Models: m.state, Modes: m.modes, ConfigOptions: m.options}, nil
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
		roots := a.rootsOf(acpsdk.SessionId(c.ID))
		if !rootsMatch(roots, p.AdditionalDirectories) {
			continue
		}
		out.Sessions = append(out.Sessions, acpsdk.SessionInfo{
			SessionId:             acpsdk.SessionId(c.ID),
			Cwd:                   c.Folder,
			Title:                 acpsdk.Ptr(c.Title),
			UpdatedAt:             acpsdk.Ptr(c.Updated.UTC().Format(time.RFC3339)),
			AdditionalDirectories: roots,
		})
	}
	return out, nil
}

// liveSession returns the ACP session id, which must be open.
func (a *agent) liveSession(id acpsdk.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok || closed(s.ws) {
		return nil, invalidParams("unknown session %q: create it with session/new, or restore it with session/load or session/resume", id)
	}
	a.recent[s.folder] = s
	return s, nil
}

// sessionOf returns the ACP sessions a notification of conversation id
// of folder goes to: that conversation's, or, for a notice of the folder
// itself (id ""), every session of the folder.
func (a *agent) sessionsOf(folder, id string) []*session {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*session
	for _, s := range a.sessions {
		if s.folder == folder && (id == "" || s.ws.ID() == id) {
			out = append(out, s)
		}
	}
	return out
}

// liveIn returns the ACP session of folder last used, for the requests
// that name no conversation (a file read or write).
func (a *agent) liveIn(folder string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.recent[folder]
}

package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/mcp"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
	"github.com/loom-lsp/loom-lsp/workspace/agentfiles"
)

// The folder's MCP servers: config.MCP says which; a tools/mcp Manager
// runs them in the background. Every change of their tools reaches the
// folder's goroutine through the manager's Changed channel (see
// Folder.run), which rebuilds the registry and publishes it to the
// conversations, whose machines are reconfigured. Nothing here waits
// for a server: the first prompt never waits for MCP.

// applyMCP starts, restarts or stops the MCP servers to match cfg.
func (s *Folder) applyMCP(cfg config.Config) {
	var specs []mcp.Spec
	var held []string
	for _, name := range sortedKeys(cfg.MCP.Servers) {
		srv := cfg.MCP.Servers[name]
		pass := map[string]string{}
		for k, v := range srv.Env {
			if v != cfg.Model.APIKeyEnv { // config refuses it; never pass it anyway
				pass[k] = v
			}
		}
		getenv := s.host.opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		// ${NAME} of loom's environment in a peer's file (or set_env,
		// headers, bearer_token_env); config refused the model's key.
		res, rerr := srv.Resolve(getenv)
		sp := mcp.Spec{
			Name: name, Command: res.Command, Args: res.Args, Dir: s.dir,
			Env: append(mcp.Environ(getenv, pass), res.SetEnv...), URL: res.URL, Headers: res.Headers,
			Timeout: srv.CallTimeout(), Roots: []string{s.dir},
			Sandbox: s.sandbox, ClientID: srv.OAuthClientID, Scopes: srv.OAuthScopes,
			ClientMetadataURL: srv.OAuthClientMetadataURL,
		}
		if rerr != nil {
			sp.NotStarted = fmt.Sprintf("not started: MCP server %q (%s) %v", name, serverFile(srv), rerr)
		}
		if srv.FromWorkspace() && !cfg.Trusted() {
			// config leaves such keys out; never start one anyway.
			sp.NotStarted = config.MCPServerNote(name, s.dir)
		}
		if srv.FromWorkspace() && srv.Command != "" && sp.NotStarted == "" {
			sp.Sandbox, sp.NotStarted = s.repoServerSandbox(cfg, name, serverFile(srv))
			if sp.NotStarted != "" {
				held = append(held, sp.NotStarted)
			}
		}
		specs = append(specs, sp)
	}
	// Servers only an untrusted folder's .loom.toml declares: config left
	// them out (its TrustNotice says so); list them as not started.
	for _, name := range untrustedServers(cfg) {
		specs = append(specs, mcp.Spec{Name: name, NotStarted: config.MCPServerNote(name, s.dir)})
	}
	// What the peers' MCP files could not give (file:line: reason).
	if notes := strings.Join(cfg.MCPNotes(), "\n"); notes != s.mcpPeerNotes {
		s.mcpPeerNotes = notes // said once per change
		if notes != "" {
			s.notify(Notification{Kind: NoteInfo, Text: "MCP servers of other agents' files left out:\n" + notes})
		}
	}
	if note := strings.Join(held, "\n"); note != s.mcpHeld {
		s.mcpHeld = note // said once per change
		if note != "" {
			s.notify(Notification{Kind: NoteError, Text: note})
		}
	}
	s.mcp.Apply(specs)
	s.next.mcpPolicies = map[string]config.Policy{}
	for name, srv := range cfg.MCP.Servers {
		s.next.mcpPolicies[name] = srv.Policy()
	}
}

// mcpPromptCommands are the ready MCP servers' prompts as slash
// commands ("/mcp.<server>.<prompt> args", scope "mcp"); Conversation.ask
// expands them through the server.
func mcpPromptCommands(m *mcp.Manager) []agentfiles.Command {
	var out []agentfiles.Command
	for _, p := range m.Prompts() {
		desc := p.Description
		if desc == "" {
			desc = "prompt of MCP server " + p.Server
		}
		out = append(out, agentfiles.Command{Name: p.Command, Description: desc, ArgumentHint: p.Hint(), Scope: "mcp"})
	}
	return out
}

// mcpTokens is the store of the MCP servers' sign-ins, in the state
// directory (nil without one: a 401 then fails the server).
func (h *Host) mcpTokens() *mcp.TokenStore {
	dir, err := h.stateDir()
	if err != nil {
		return nil
	}
	return mcp.NewTokenStore(mcp.DefaultTokenFile(dir))
}

// MCPLogin signs in to the folder's HTTP MCP server name (OAuth, see
// mcp.Login): open shows the authorization URL to the user (LSP
// window/showDocument, or printed). Once signed in, the server restarts
// with the token. It blocks until the browser came back or ctx ends.
func (s *Folder) MCPLogin(ctx context.Context, name string, open func(context.Context, string) error) (mcp.LoginResult, error) {
	sp, ok := s.mcp.Spec(name)
	if !ok {
		return mcp.LoginResult{}, fmt.Errorf("no MCP server %q in this folder", name)
	}
	if sp.NotStarted != "" {
		return mcp.LoginResult{}, errors.New(sp.NotStarted)
	}
	if s.mcp.Tokens() == nil {
		return mcp.LoginResult{}, errors.New("no state directory to keep the token in")
	}
	res, err := mcp.Login(ctx, mcp.LoginOptions{Spec: sp, Store: s.mcp.Tokens(), Open: open})
	if err == nil {
		s.mcp.Retry(name)
	}
	return res, err
}

// MCPLogout forgets the sign-in of the folder's server name and restarts
// it (it then needs sign-in); it reports whether there was one.
func (s *Folder) MCPLogout(name string) (bool, error) {
	sp, ok := s.mcp.Spec(name)
	if !ok {
		return false, fmt.Errorf("no MCP server %q in this folder", name)
	}
	if s.mcp.Tokens() == nil {
		return false, nil
	}
	had, err := mcp.Logout(s.mcp.Tokens(), sp)
	if had {
		s.mcp.Retry(name)
	}
	return had, err
}

// repoServerSandbox is the sandbox a repository's stdio MCP server runs
// in, or why it does not start. Trust binds the server's definition, not
// the files it runs (a script, a package's code): the agent may have
// rewritten those with write_file, unasked. So, as for the repository's
// agent hooks (repoHooksOff): not under tools.bash = "deny", nor under
// "ask" with the sandbox off; under "ask", sandboxed with no network.
func (s *Folder) repoServerSandbox(cfg config.Config, name, file string) (*sandbox.Sandbox, string) {
	if off := repoHooksOff(cfg.Tools.Bash, s.sandbox != nil); off != "" {
		return nil, fmt.Sprintf("MCP server %q of %s not started: %s, and it runs files the agent may have written", name, file, off)
	}
	if cfg.Tools.Bash != config.PolicyAsk || s.sandbox == nil {
		return s.sandbox, ""
	}
	if s.offlineOf != s.sandbox {
		// One value per sandbox: a new one would restart the servers.
		s.offlineOf, s.offline = s.sandbox, s.sandbox.Offline()
	}
	return s.offline, ""
}

// serverFile names the file that declares a server of the workspace: a
// peer's (.mcp.json, …) or "the workspace's .loom.toml".
func serverFile(srv config.MCPServer) string {
	if f := srv.File(); f != "" {
		return f
	}
	if srv.FromWorkspace() {
		return "the workspace's .loom.toml"
	}
	return "your configuration"
}

// untrustedServers names the MCP servers whose keys config left out of an
// untrusted folder's .loom.toml and that no other source declares.
func untrustedServers(cfg config.Config) []string {
	var names []string
	for _, key := range cfg.IgnoredKeys() {
		rest, ok := strings.CutPrefix(key, "mcp.servers.")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, ".")
		if _, declared := cfg.MCP.Servers[name]; !declared && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// syncMCP runs on the folder's goroutine when the manager signals a
// change: failures are shown once, and the tool list follows the ready
// servers.
func (s *Folder) syncMCP() {
	for _, r := range s.mcp.TakeReports() {
		// A sign-in needed is shown as loudly as a failure: the user
		// must act for the server to start.
		kind := NoteError
		if r.Info {
			kind = NoteInfo
		}
		s.notify(Notification{Kind: kind, Text: r.Text})
	}
	ready := map[string]bool{}
	for _, st := range s.mcp.Status() {
		if st.State == mcp.StateReady {
			ready[st.Name] = true
			if !s.mcpReady[st.Name] {
				s.afterPublish = append(s.afterPublish, Notification{Kind: NoteInfo, Text: fmt.Sprintf("MCP server %q is ready: %d tools", st.Name, st.Tools)})
			}
		}
	}
	s.mcpReady = ready
	if s.rebuildTools() {
		s.publish()
	}
	s.flushNotices()
}

// rebuildTools makes the registry the built-in tools plus the ready MCP
// servers' tools. It reports whether that changed the registry. Tools
// whose model name another took, and those past MaxTools, are left out
// with one notice per change (offeredTools).
func (s *Folder) rebuildTools() bool {
	builtin := append(tools.DefaultRegistry().All(), tools.Tool(agentTool{agents: &s.agents}))
	builtin = append(builtin, s.host.webTools(s.next.cfg)...)
	all, notes := offeredTools(builtin, s.mcp.Tools(), MaxTools)
	if note := strings.Join(notes, "\n"); note != s.next.toolsNote {
		s.next.toolsNote = note // once per change
		if note != "" {
			s.log.Warn("MCP tools left out", "why", note)
			s.afterPublish = append(s.afterPublish, Notification{Kind: NoteError, Text: note})
		}
	}
	if len(s.next.agent.skills) > 0 {
		all = append(all, skillTool{skills: &s.skills})
	}
	reg := tools.NewRegistry(all...)
	if s.next.schemas != nil && sameTools(s.next.registry, reg) {
		return false
	}
	s.next.registry = reg
	s.next.schemas = toolSchemas(reg)
	return true
}

func sameTools(a, b *tools.Registry) bool {
	return slices.EqualFunc(a.All(), b.All(), func(x, y tools.Tool) bool {
		return x.Name() == y.Name() && x.Mutating() == y.Mutating() &&
			x.Description() == y.Description() && string(x.Schema()) == string(y.Schema())
	})
}

// alwaysAllowed remembers the MCP tools the user allowed for the rest of
// the session ("Always allow"), by "<server>__<tool>". Approvals run on
// tool workers, so it has its own lock; asking holds another, so that
// parallel read-only calls ask one at a time and an "Always allow" spares
// the calls waiting behind it.
type alwaysAllowed struct {
	asking sync.Mutex
	mu     sync.Mutex
	names  map[string]bool
}

func (a *alwaysAllowed) allowed(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.names[name]
}

func (a *alwaysAllowed) allow(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.names == nil {
		a.names = map[string]bool{}
	}
	a.names[name] = true
}

// AskServer asks the user whether an MCP tool may be called (the
// policy said Ask: the server's approve = "ask", and the user allowed
// neither the server for good nor the tool for the session). It
// returns "" when the call may run, else the tool result that explains
// why not.
func (r callRun) AskServer(ctx context.Context, turn uint64, c fsm.ToolCall) string {
	s, b := r.s, r.b
	tool, _ := b.registry.Get(c.Name)
	t := tool.(*mcp.Tool)
	s.always.asking.Lock()
	defer s.always.asking.Unlock()
	if s.always.allowed(t.Name()) {
		return ""
	}
	ok, err := s.out.approve(ctx, Approval{
		Folder: s.folder.dir, Turn: turn, Tool: c.Name, CallID: c.ID, Server: t.Server(),
		Detail: fmt.Sprintf("MCP server %s, tool %s, arguments: %s", t.Server(), t.RemoteName(), compactJSON(c.Arguments)),
		Always: func() { s.always.allow(t.Name()) },
	}, b.approvalTimeout)
	switch {
	case errors.Is(err, ErrUnsupported):
		return fmt.Sprintf(`tool error: MCP server %q needs the user's approval (approve = "ask") and this client cannot ask; the tool was not called`, t.Server())
	case errors.Is(err, errApprovalTimeout):
		return fmt.Sprintf("tool error: denied: no answer within %s (tools.approval_timeout); the tool was not called", b.approvalTimeout)
	case err != nil:
		return "tool error: could not ask the user to approve the call: " + err.Error()
	case !ok:
		return "tool error: denied by the user; the tool was not called"
	}
	return ""
}

func compactJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return strings.TrimSpace(s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// MCPResources lists the resources and resource templates of the
// folder's ready MCP servers, which the user may attach to a prompt
// (ContextResource).
func (s *Folder) MCPResources() []mcp.Resource { return s.mcp.Resources() }

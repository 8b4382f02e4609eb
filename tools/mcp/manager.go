// Package mcp connects the agent to the user's Model Context Protocol
// servers (github.com/modelcontextprotocol/go-sdk): it starts each server
// (a command speaking MCP on its stdio, or a streamable HTTP endpoint),
// follows its tool list, and offers each of its tools as a [tools.Tool]
// named "<server>__<tool>".
//
// A [Manager] owns the servers of one session. [Manager.Apply] starts,
// restarts and stops servers to match a configuration without blocking:
// servers connect in the background and their tools appear when ready.
// Changes are signalled on [Manager.Changed], for the session's owner
// goroutine to rebuild its tool list; failures are queued once each for
// [Manager.TakeReports].
package mcp

import (
	"log/slog"
	"maps"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// Spec says how to start one server.
type Spec struct {
	// Name is the server's name, the prefix of its tools' names.
	Name string
	// Command and Args start a stdio server in Dir, with exactly Env as
	// its environment ("KEY=value" entries).
	Command string
	Args    []string
	Env     []string
	Dir     string
	// URL is a streamable HTTP endpoint, instead of Command.
	URL string
	// Headers go with every request to URL (they may hold a token: never
	// shown or logged).
	Headers map[string]string
	// Roots are the directories offered to the server as MCP roots (the
	// workspace folder).
	Roots []string
	// Timeout bounds one tool call; zero means DefaultTimeout.
	Timeout time.Duration
	// NotStarted, when not "", says why the server must not start (an
	// untrusted folder's server): it is listed with this reason.
	NotStarted string
	// Sandbox, when not nil, confines a stdio server's process like a
	// bash command (package sandbox).
	Sandbox *sandbox.Sandbox
	// ClientID is the OAuth client id pre-registered with the server's
	// authorization server ("" registers dynamically); Scopes, when not
	// empty, are the scopes asked for instead of the server's.
	ClientID string
	Scopes   []string
	// ClientMetadataURL is loom's Client ID Metadata Document, used as
	// the client id where the authorization server supports it.
	ClientMetadataURL string
}

// DefaultTimeout bounds a tool call when Spec.Timeout is zero.
const DefaultTimeout = 2 * time.Minute

func (s Spec) same(o Spec) bool {
	return s.Name == o.Name && s.Command == o.Command && slices.Equal(s.Args, o.Args) &&
		slices.Equal(s.Env, o.Env) && s.Dir == o.Dir && s.URL == o.URL && maps.Equal(s.Headers, o.Headers) && slices.Equal(s.Roots, o.Roots) && s.Timeout == o.Timeout &&
		s.NotStarted == o.NotStarted && s.Sandbox == o.Sandbox && s.ClientID == o.ClientID && slices.Equal(s.Scopes, o.Scopes) &&
		s.ClientMetadataURL == o.ClientMetadataURL
}

// State is where a server is in its life.
type State string

// Server states.
const (
	StateStarting   State = "starting"    // connecting, tools not yet listed
	StateReady      State = "ready"       // its tools are offered
	StateFailed     State = "failed"      // failed to start or died; no tools
	StateNotStarted State = "not started" // Spec.NotStarted said why
	// StateNeedsSignIn: an HTTP server answered 401 and no stored sign-in
	// works; Login, then Retry.
	StateNeedsSignIn State = "needs sign-in"
)

// ServerStatus is a snapshot of one server, for loom.status.
type ServerStatus struct {
	Name  string `json:"name"`
	State State  `json:"state"`
	// Tools counts the tools offered (0 unless ready); Prompts and
	// Resources count the server's prompts and resources likewise.
	Tools     int `json:"tools"`
	Prompts   int `json:"prompts,omitempty"`
	Resources int `json:"resources,omitempty"`
	// Templates counts the server's resource templates.
	Templates int `json:"templates,omitempty"`
	// Error says why it failed or was not started.
	Error string `json:"error,omitempty"`
}

// Report is a failure to show the user once.
type Report struct {
	Server string
	// Text says what happened, with the tail of the server's stderr.
	Text string
	// SignIn: the server needs the user to sign in (Text says how).
	SignIn bool
	// Info: news, not a failure (a URL-mode elicitation completed after
	// its call ended).
	Info bool
}

// Options configures a Manager.
type Options struct {
	// Logger receives the servers' stderr and lifecycle; nil discards.
	Logger *slog.Logger
	// Version is the client version sent in initialize.
	Version string
	// Tokens holds the OAuth sign-ins of HTTP servers; nil: no sign-in
	// (a 401 fails the server).
	Tokens *TokenStore
}

// Manager runs the MCP servers of one session. Its methods are safe for
// concurrent use.
type Manager struct {
	opts    Options
	changed chan struct{}

	mu      sync.Mutex
	servers map[string]*server
	reports []Report
	closed  bool
	wg      sync.WaitGroup // counts every server's goroutines
}

// NewManager returns a Manager with no servers.
func NewManager(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	return &Manager{opts: opts, changed: make(chan struct{}, 1), servers: map[string]*server{}}
}

// Changed receives a value (coalesced) whenever the tools, the states or
// the reports changed.
func (m *Manager) Changed() <-chan struct{} { return m.changed }

func (m *Manager) signal() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// Apply makes the running servers match specs: a new server starts, a
// changed one restarts, a missing one stops. It does not wait for any.
func (m *Manager) Apply(specs []Spec) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	want := map[string]Spec{}
	for _, sp := range specs {
		want[sp.Name] = sp
	}
	for name, srv := range m.servers {
		// A failed server is retried by any reload (so is one that
		// needed sign-in: the user may have signed in meanwhile).
		if sp, ok := want[name]; !ok || !sp.same(srv.spec) || srv.failed() || srv.state == StateNeedsSignIn {
			srv.stop()
			delete(m.servers, name)
		}
	}
	for _, sp := range specs {
		if _, running := m.servers[sp.Name]; running {
			continue
		}
		srv := newServer(m, sp)
		m.servers[sp.Name] = srv
		if sp.NotStarted != "" {
			srv.state, srv.err = StateNotStarted, sp.NotStarted
			continue
		}
		m.wg.Add(1)
		go func() { defer m.wg.Done(); srv.run() }()
	}
	m.signal()
}

// Tools returns the tools of the ready servers, sorted by name.
func (m *Manager) Tools() []*Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	var all []*Tool
	for _, srv := range m.servers {
		if srv.state == StateReady {
			all = append(all, srv.tools...)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].name < all[j].name })
	return all
}

// Status returns every configured server, sorted by name.
func (m *Manager) Status() []ServerStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ServerStatus, 0, len(m.servers))
	for _, srv := range m.servers {
		st := ServerStatus{Name: srv.spec.Name, State: srv.state, Error: srv.err}
		if srv.state == StateReady {
			st.Tools, st.Prompts, st.Resources = len(srv.tools), len(srv.prompts), len(srv.resources)
			st.Templates = len(srv.templates)
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Spec returns the configured server name.
func (m *Manager) Spec(name string) (Spec, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	srv, ok := m.servers[name]
	if !ok {
		return Spec{}, false
	}
	return srv.spec, true
}

// Tokens is the store of the servers' sign-ins (nil when there is none).
func (m *Manager) Tokens() *TokenStore { return m.opts.Tokens }

// Retry restarts server name (after a sign-in or a sign-out); it reports
// whether there is such a server.
func (m *Manager) Retry(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	srv, ok := m.servers[name]
	if !ok || m.closed || srv.spec.NotStarted != "" {
		return ok
	}
	srv.stop()
	srv = newServer(m, srv.spec)
	m.servers[name] = srv
	m.wg.Add(1)
	go func() { defer m.wg.Done(); srv.run() }()
	m.signal()
	return true
}

// TakeReports returns the failures not yet taken, oldest first.
func (m *Manager) TakeReports() []Report {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.reports
	m.reports = nil
	return r
}

// report queues a failure, with m.mu held.
func (m *Manager) report(r Report) {
	m.reports = append(m.reports, r)
	m.signal()
}

// Close stops every server (a stdio server's whole process group is
// killed) and waits until they are gone. Apply does nothing afterwards.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	for name, srv := range m.servers {
		srv.stop()
		delete(m.servers, name)
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// Environ returns the environment of a stdio server: PATH and HOME, and
// for each entry of pass the variable named by its value, under the name
// of its key. Variables that are not set are left out. Nothing else of
// getenv's environment (an API key) gets through.
func Environ(getenv func(string) string, pass map[string]string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	env := []string{}
	for _, k := range []string{"PATH", "HOME"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	names := make([]string, 0, len(pass))
	for k := range pass {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if v := getenv(pass[k]); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

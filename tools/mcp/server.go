package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loom-lsp/loom-lsp/tools/reap"
)

const (
	// startTimeout bounds connecting and the first tools/list.
	startTimeout = time.Minute
	// gracefulStop is how long a stdio server may take to exit once its
	// stdin is closed, before its process group is killed.
	gracefulStop = 500 * time.Millisecond
	// stderrSettle bounds the wait for the rest of a dead server's stderr.
	stderrSettle = 2 * time.Second
)

// server is one configured server and the goroutine that runs it. Its
// state, err, tools and session are guarded by the manager's mu.
type server struct {
	m      *Manager
	spec   Spec
	ctx    context.Context
	cancel context.CancelFunc

	state State
	pid   int // a stdio server's process (group) id once started
	err   string
	tools []*Tool
	// prompts and resources are what the server offers besides tools
	// (nil unless ready, or when it offers none).
	prompts   []*sdk.Prompt
	resources []*sdk.Resource
	templates []*sdk.ResourceTemplate
	// listings counts successful tools/list calls.
	listings int
	session  *sdk.ClientSession

	oauth   *tokenHandler // an HTTP server signing in through opts.Tokens
	refresh chan struct{} // tools/list_changed, coalesced
	stderr  tail

	progMu    sync.Mutex
	progress  map[string]chan<- string // by progress token
	nextToken int
	askers    []*askerEntry
	urls      map[string]urlWait // accepted URL-mode requests by elicitation id // the in-flight calls that can ask their user
}

func newServer(m *Manager, spec Spec) *server {
	ctx, cancel := context.WithCancel(context.Background())
	return &server{m: m, spec: spec, ctx: ctx, cancel: cancel, state: StateStarting,
		refresh: make(chan struct{}, 1), progress: map[string]chan<- string{}}
}

// stop asks the server's goroutine to shut it down.
func (s *server) stop() { s.cancel() }

// running is what a stdio server's process left to clean up.
type running struct {
	pid        int           // process group to kill; 0 for HTTP
	marker     string        // reap marker of the process and all it starts; "" for HTTP
	stderrDone chan struct{} // closed when stderr reached EOF
	stderrR    *os.File
}

// run connects, lists the tools, then follows the server until it is
// stopped or dies.
func (s *server) run() {
	log := s.m.opts.Logger.With("mcp_server", s.spec.Name)
	start := time.Now()
	cs, proc, err := s.connect()
	if err != nil {
		s.finish(nil, proc)
		if s.ctx.Err() == nil && s.oauth.signInNeeded() {
			s.needSignIn(err)
			return
		}
		if s.ctx.Err() == nil {
			s.fail(fmt.Sprintf("MCP server %q failed to start: %v", s.spec.Name, err))
		}
		return
	}
	defer s.finish(cs, proc)
	if err := s.listTools(cs); err != nil {
		if s.ctx.Err() == nil {
			s.fail(fmt.Sprintf("MCP server %q failed to list its tools: %v", s.spec.Name, err))
		}
		return
	}
	log.Info("MCP server ready", "tools", s.toolCount(), "took", time.Since(start).Round(time.Millisecond))
	died := make(chan error, 1)
	s.m.wg.Add(1)
	go func() { defer s.m.wg.Done(); died <- cs.Wait() }()
	// The process may exit while a descendant still holds its stdout, so
	// the connection never sees EOF: watch the process itself too.
	exited := make(chan struct{})
	if proc.pid > 0 {
		s.m.wg.Add(1)
		go func() { defer s.m.wg.Done(); waitExit(proc.pid); close(exited) }()
	}
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.refresh:
			if err := s.listTools(cs); err != nil && s.ctx.Err() == nil {
				log.Warn("MCP tools/list failed after list_changed", "err", err)
			}
		case <-exited:
			if s.ctx.Err() != nil {
				return
			}
			killGroup(proc.pid) // its descendants go with it, closing stdout
			s.died(proc, fmt.Errorf("the process exited"))
			return
		case err := <-died:
			if s.ctx.Err() != nil {
				return
			}
			s.died(proc, err)
			return
		}
	}
}

// died reports a server whose connection or process ended by itself.
func (s *server) died(proc running, err error) {
	if proc.stderrDone != nil {
		select {
		case <-proc.stderrDone:
		case <-time.After(stderrSettle):
		}
	}
	why := "the connection closed"
	if err != nil && !errors.Is(err, io.EOF) {
		why = err.Error()
	}
	s.fail(fmt.Sprintf("MCP server %q stopped (%s); its tools are no longer offered", s.spec.Name, why))
}

// connect starts the server and runs the MCP initialize handshake.
func (s *server) connect() (*sdk.ClientSession, running, error) {
	var proc running
	client := sdk.NewClient(&sdk.Implementation{Name: "loom-lsp", Version: s.m.opts.Version}, &sdk.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) { s.relist() },
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { s.relist() },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { s.relist() },
		ElicitationHandler:         s.elicit,
		ElicitationCompleteHandler: s.elicitationComplete,
		Capabilities: &sdk.ClientCapabilities{
			RootsV2:     &sdk.RootCapabilities{ListChanged: true},
			Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}},
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			s.forwardProgress(req.Params)
		},
	})
	for _, dir := range s.spec.Roots {
		client.AddRoots(&sdk.Root{URI: (&url.URL{Scheme: "file", Path: dir}).String(), Name: filepath.Base(dir)})
	}
	ctx, cancel := context.WithTimeout(s.ctx, startTimeout)
	defer cancel()
	if s.spec.URL != "" {
		tr := &sdk.StreamableClientTransport{Endpoint: s.spec.URL, HTTPClient: s.httpClient(), MaxRetries: 2}
		if s.spec.usesOAuth(s.m.opts.Tokens) {
			s.oauth = &tokenHandler{store: s.m.opts.Tokens, url: s.spec.URL, client: &http.Client{Timeout: startTimeout}}
			tr.OAuthHandler = s.oauth
		}
		cs, err := client.Connect(ctx, tr, nil)
		return cs, proc, err
	}
	cmd := exec.Command(s.spec.Command, s.spec.Args...)
	cmd.Dir = s.spec.Dir
	cmd.Env = append([]string{}, s.spec.Env...) // never nil: nil would inherit ours
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Marked as a bash command is: what it starts outside its process
	// group (setsid -f, a double fork) is killed when it stops, and by the
	// watchdog when the daemon dies, even of SIGKILL (see tools/reap).
	proc.marker = reap.NewMarker()
	cmd.Env = append(cmd.Env, reap.Env(proc.marker))
	if err := s.spec.Sandbox.Wrap(cmd); err != nil {
		return nil, proc, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, proc, err
	}
	cmd.Stderr = w
	proc.stderrR, proc.stderrDone = r, make(chan struct{})
	s.m.wg.Add(1)
	go func() { defer s.m.wg.Done(); s.readStderr(r, proc.stderrDone) }()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: gracefulStop}, nil)
	w.Close() // the child has its copy
	if cmd.Process != nil {
		proc.pid = cmd.Process.Pid
		s.m.mu.Lock()
		s.pid = proc.pid
		s.m.mu.Unlock()
	}
	if err != nil && proc.stderrDone != nil {
		// The server probably exited: let its last words arrive.
		select {
		case <-proc.stderrDone:
		case <-time.After(stderrSettle):
		}
	}
	return cs, proc, err
}

// finish closes the session, kills a stdio server's process group and
// releases its stderr.
func (s *server) finish(cs *sdk.ClientSession, proc running) {
	s.m.mu.Lock()
	s.session = nil
	s.m.mu.Unlock()
	if cs != nil {
		closed := make(chan struct{})
		s.m.wg.Add(1)
		go func() { defer s.m.wg.Done(); cs.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(gracefulStop):
		}
		killGroup(proc.pid)
		<-closed
	}
	killGroup(proc.pid)
	if proc.marker != "" {
		reap.KillMarked(proc.marker, false)
	}
	if proc.stderrR != nil {
		select {
		case <-proc.stderrDone:
		case <-time.After(stderrSettle):
		}
		proc.stderrR.Close()
	}
}

// killGroup kills the process group pgid; a group already gone is fine.
func killGroup(pgid int) {
	if pgid > 1 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// relist asks the server's goroutine to list its offers again
// (a list_changed notification; coalesced).
func (s *server) relist() {
	select {
	case s.refresh <- struct{}{}:
	default:
	}
}

// listTools replaces the server's tools, prompts and resources with what
// tools/list, prompts/list and resources/list say.
func (s *server) listTools(cs *sdk.ClientSession) error {
	ctx, cancel := context.WithTimeout(s.ctx, startTimeout)
	defer cancel()
	o, err := listOthers(ctx, cs)
	if err != nil {
		return err
	}
	prompts, resources := o.prompts, o.resources
	var list []*Tool
	seen := map[string]bool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		tool := newTool(s, t)
		if seen[tool.name] {
			s.m.opts.Logger.Warn("MCP tool skipped: its name clashes with another once sanitized", "mcp_server", s.spec.Name, "tool", t.Name)
			continue
		}
		seen[tool.name] = true
		list = append(list, tool)
	}
	if len(resources) > 0 || len(o.templates) > 0 {
		if rt := resourceTool(s, resources, o.templates); !seen[rt.name] {
			list = append(list, rt) // the server's own tool of that name wins
		}
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.ctx.Err() != nil {
		return nil
	}
	s.state, s.err, s.tools, s.session = StateReady, "", list, cs
	s.prompts, s.resources, s.templates = prompts, resources, o.templates
	s.listings++
	s.m.signal()
	return nil
}

// offers is what a server offers besides tools.
type offers struct {
	prompts   []*sdk.Prompt
	resources []*sdk.Resource
	templates []*sdk.ResourceTemplate
}

// listOthers lists the prompts, resources and resource templates of a
// server that offers them (its capabilities say so).
func listOthers(ctx context.Context, cs *sdk.ClientSession) (offers, error) {
	var o offers
	caps := cs.InitializeResult().Capabilities
	if caps != nil && caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return offers{}, fmt.Errorf("prompts/list: %w", err)
			}
			o.prompts = append(o.prompts, p)
		}
	}
	if caps != nil && caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return offers{}, fmt.Errorf("resources/list: %w", err)
			}
			o.resources = append(o.resources, r)
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				// Templates are optional to a server that offers resources:
				// one that does not know the method still works.
				break
			}
			o.templates = append(o.templates, r)
		}
	}
	return o, nil
}

func (s *server) toolCount() int {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return len(s.tools)
}

// fail marks the server failed, drops its tools and reports it once.
func (s *server) fail(msg string) {
	if t := s.stderr.String(); t != "" {
		msg += "\nits stderr ended with:\n" + t
	}
	s.m.opts.Logger.Warn("MCP server failed", "mcp_server", s.spec.Name, "err", msg)
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	s.state, s.err, s.tools, s.session = StateFailed, firstLine(msg), nil, nil
	s.prompts, s.resources, s.templates = nil, nil, nil
	s.m.report(Report{Server: s.spec.Name, Text: msg})
}

// needSignIn marks the server as waiting for the user to sign in, and
// says so once.
func (s *server) needSignIn(err error) {
	why := err.Error()
	if i := strings.Index(why, ErrNeedsSignIn.Error()+": "); i >= 0 {
		why = why[i+len(ErrNeedsSignIn.Error())+2:]
	}
	msg := fmt.Sprintf("MCP server %q needs sign-in (%s): %s", s.spec.Name, why, SignInHow(s.spec.Name))
	s.m.opts.Logger.Info("MCP server needs sign-in", "mcp_server", s.spec.Name)
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	s.state, s.err, s.tools, s.session = StateNeedsSignIn, msg, nil, nil
	s.prompts, s.resources, s.templates = nil, nil, nil
	s.m.report(Report{Server: s.spec.Name, Text: msg, SignIn: true})
}

// currentSession returns the session while the server is ready.
func (s *server) currentSession() (*sdk.ClientSession, State) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return s.session, s.state
}

// watchProgress registers a progress token for one call; the returned
// func unregisters it.
func (s *server) watchProgress(ch chan<- string) (token string, done func()) {
	s.progMu.Lock()
	defer s.progMu.Unlock()
	s.nextToken++
	token = fmt.Sprintf("loom-%d", s.nextToken)
	s.progress[token] = ch
	return token, func() {
		s.progMu.Lock()
		defer s.progMu.Unlock()
		delete(s.progress, token)
	}
}

func (s *server) forwardProgress(p *sdk.ProgressNotificationParams) {
	if p == nil {
		return
	}
	token, _ := p.ProgressToken.(string)
	s.progMu.Lock()
	ch := s.progress[token]
	s.progMu.Unlock()
	if ch == nil {
		return
	}
	msg := fmt.Sprintf("%g", p.Progress)
	if p.Total > 0 {
		msg += fmt.Sprintf("/%g", p.Total)
	}
	if p.Message != "" {
		msg += " " + p.Message
	}
	select {
	case ch <- msg:
	default: // the caller is behind: skip this one
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// failed reports whether the server failed, with the manager's mu held.
func (s *server) failed() bool { return s.state == StateFailed }

// timeout is the per-call timeout.
func (s *server) timeout() time.Duration {
	if s.spec.Timeout <= 0 {
		return DefaultTimeout
	}
	return s.spec.Timeout
}

// httpClient is the client of an HTTP server: it sends the spec's headers
// with every request.
func (s *server) httpClient() *http.Client {
	if len(s.spec.Headers) == 0 {
		return &http.Client{}
	}
	return &http.Client{Transport: headerTransport{headers: s.spec.Headers, base: http.DefaultTransport}}
}

// headerTransport adds fixed headers to each request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	return h.base.RoundTrip(req)
}

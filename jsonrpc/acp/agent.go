package acp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// Options configures Serve.
type Options struct {
	// Host configures the workspace host; its Editor is set by Serve.
	Host workspace.HostOptions
	// Version is reported in agentInfo.
	Version string
	// Logger logs to stderr or a file, never stdout. Default: discard.
	Logger *slog.Logger
}

// Serve speaks ACP with the client on r (the client's messages) and w
// (ours) until r ends or ctx is done. Then it cancels every turn, kills
// the processes the tools started, flushes the journals and returns.
// Nothing but JSON-RPC messages is written to w.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	a := &agent{
		log:      opts.Logger,
		version:  opts.Version,
		sessions: map[acpsdk.SessionId]*session{},
		recent:   map[string]*session{},
		turns:    map[turnKey]*turnWait{},
		announce: map[string]int{},
		proto:    &protocol{},
	}
	a.openings = &openings{mu: &a.mu, notes: map[acpsdk.SessionId]*openingNotes{}, notify: a.notifySession}
	hostOpts := opts.Host
	hostOpts.Editor = a
	if hostOpts.TrustHow == nil {
		hostOpts.TrustHow = func() string { return TrustHow }
	}
	if hostOpts.KeepHow == "" {
		hostOpts.KeepHow, hostOpts.DiscardHow = KeepHow, DiscardHow
	}
	if hostOpts.Logger == nil {
		hostOpts.Logger = opts.Logger
	}
	a.host = workspace.NewHost(hostOpts)
	var stopBG context.CancelFunc
	a.bgCtx, stopBG = context.WithCancel(context.Background())
	// The SDK starts handling requests inside NewAgentSideConnection, so
	// the handlers reach the connection only through client(), which
	// waits until it is set (a happens-before edge for the race detector).
	a.ready = make(chan struct{})
	a.out = newOutbox(func(ctx context.Context, n acpsdk.SessionNotification) error {
		return a.client().SessionUpdate(ctx, n)
	}, func(ctx context.Context, u rawUpdate) error {
		return a.client().NotifyExtension(ctx, extSessionUpdate, u)
	})
	a.updates = newUpdates(&a.mu, a.out)
	a.watch = newResponseWatch()
	a.commands = &commandAds{watch: a.watch, updates: a.updates}
	// The SDK's receive goroutine reads its logger when the input ends
	// (shutdownReceive), and SetLogger writes it unguarded: the gated
	// reader lets that goroutine read nothing, and so end nothing, before
	// the logger is set and ready closed (a client that closes at once
	// raced here).
	a.conn = acpsdk.NewAgentSideConnection(a, &capsWriter{out: protoWriter{a.proto, a.watch.writer(w)}},
		&gatedReader{gate: a.ready, r: newDeleteReader(a.watch.reader(r), a.proto.in)})
	a.conn.SetLogger(opts.Logger)
	close(a.ready)
	select {
	case <-a.conn.Done():
	case <-ctx.Done():
	}
	stopBG()
	a.bg.Wait()
	a.host.Close()
	// The last updates go out, unless nobody reads them any more.
	closed := make(chan struct{})
	go func() { a.out.close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(outboxDrainTimeout):
		opts.Logger.Warn("the client does not read stdout; the last updates were dropped")
	}
}

// outboxDrainTimeout bounds the wait for the last updates at exit.
const outboxDrainTimeout = time.Second

// agent is the ACP agent: the handlers of the SDK's Agent interface, and
// the workspace.Editor of the sessions it hosts.
type agent struct {
	log     *slog.Logger
	version string
	host    *workspace.Host
	conn    *acpsdk.AgentSideConnection // set once, before ready is closed
	ready   chan struct{}               // closed once conn is set
	out     *outbox
	// updates queues the sessions' updates on out, behind a replay
	// (notices.go).
	updates *updateQueue
	// openings catches what conversations being opened say (notices.go).
	openings *openings
	// proto is the protocol version the connection negotiated, and what
	// differs with it (protocol.go).
	proto *protocol
	// bgCtx ends when the connection does; bg counts the background
	// work (the model server's list) Serve waits for before it returns.
	bgCtx context.Context
	bg    sync.WaitGroup
	// watch runs what waits for a session's response (afterresponse.go).
	watch *responseWatch
	// commands advertises the sessions' slash commands (review.go).
	commands *commandAds

	mu sync.Mutex
	fs acpsdk.FileSystemCapabilities // what the client can do with files
	// planCapable: the client declared clientCapabilities.plan
	// (planops.go).
	planCapable bool
	// subagentsCapable: the client declared clientCapabilities.subagents;
	// children are its announced child sessions (subagents.go).
	subagentsCapable bool
	children         map[acpsdk.SessionId]*childSession
	sessions         map[acpsdk.SessionId]*session
	// recent maps a workspace folder to its ACP session last used.
	recent map[string]*session
	turns  map[turnKey]*turnWait
	// announce records the tool calls announced with a tool_call, by
	// session id and call id, until they finish.
	announce map[string]int
	// mcpLayer is the configuration layer of the client's MCP servers
	// last applied, "" for none.
	mcpLayer string
	// announced holds the ids of the sessions told their slash commands
	// and trust notice (see trust.go).
	announced sync.Map
}

// session is one ACP session: a conversation of a workspace folder.
type session struct {
	id     acpsdk.SessionId
	folder string
	ws     *workspace.Conversation
	// always holds the "always" answers to permission requests, by tool;
	// guarded by agent.mu.
	always map[string]bool
	// retracted counts the session's retracted messages; it makes the
	// messageId of the agent's text. Guarded by agent.mu.
	retracted int
	// notices counts the notices sent, for their messageIds; guarded by
	// agent.mu.
	notices int
	// modelOptions is the "model" config option last given to the
	// client (modes.go); guarded by agent.mu.
	modelOptions []acpsdk.SessionConfigOption
	// trustSaid is the trust notice last sent, so it is said once;
	// guarded by agent.mu.
	trustSaid string
	// roots are the session's additional directories as granted
	// (roots.go); guarded by agent.mu.
	roots []string
	// todoShown: a plan_update of the todo list was sent and not
	// removed; proposal is the planId of the proposed plan shown, and
	// proposalBuilding says it was accepted and is being built
	// (planops.go). Guarded by agent.mu.
	todoShown bool
	// userIDs maps the messageIds of the session's prompts to their
	// turns (rewind.go); guarded by agent.mu.
	userIDs map[string]uint64
	// prompts counts the v2 prompts given loom's own messageId
	// (v2state.go); guarded by agent.mu.
	prompts          int
	proposal         string
	proposalBuilding bool
}

// turnKey names a turn of an ACP session.
type turnKey struct {
	id   acpsdk.SessionId
	turn uint64
}

// turnWait is how a turn ended, delivered once its updates were sent.
type turnWait struct {
	done    chan struct{}
	outcome fsm.TurnOutcome
	// usage is the turn's token usage.
	usage fsm.Usage
	// err is the turn's last error from the model or the state machine.
	err *workspace.ErrorReported
}

var _ acpsdk.Agent = (*agent)(nil)
var _ acpsdk.AgentLoader = (*agent)(nil)
var _ interface {
	UnstableSetSessionModel(context.Context, acpsdk.UnstableSetSessionModelRequest) (acpsdk.UnstableSetSessionModelResponse, error)
} = (*agent)(nil)
var _ workspace.Editor = (*agent)(nil)
var _ workspace.DocumentStore = (*agent)(nil)

// invalidParams is a -32602 error whose message says what is wrong.
func invalidParams(format string, args ...any) *acpsdk.RequestError {
	msg := fmt.Sprintf(format, args...)
	return &acpsdk.RequestError{Code: -32602, Message: "Invalid params: " + msg, Data: map[string]any{"error": msg}}
}

// Initialize implements acpsdk.Agent.
func (a *agent) Initialize(_ context.Context, p acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	var planCaps map[string]any
	hasPlan, _ := metaMember(p.Meta, metaPlanCapability, &planCaps)
	var subagentCaps map[string]any
	hasSubagents, _ := metaMember(p.Meta, metaSubagentsCapability, &subagentCaps)
	a.mu.Lock()
	a.fs = p.ClientCapabilities.Fs
	a.planCapable, a.subagentsCapable = hasPlan, hasSubagents
	a.mu.Unlock()
	client := "unknown client"
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	a.log.Info("initialize", "client", client, "protocolVersion", p.ProtocolVersion,
		"readTextFile", p.ClientCapabilities.Fs.ReadTextFile, "writeTextFile", p.ClientCapabilities.Fs.WriteTextFile)
	return acpsdk.InitializeResponse{
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		AgentCapabilities: acpsdk.AgentCapabilities{
			LoadSession:        true,
			McpCapabilities:    acpsdk.McpCapabilities{Http: true},
			PromptCapabilities: acpsdk.PromptCapabilities{EmbeddedContext: true, Image: true, Audio: false},
			SessionCapabilities: acpsdk.SessionCapabilities{
				List:   &acpsdk.SessionListCapabilities{},
				Resume: &acpsdk.SessionResumeCapabilities{},
				Close:  &acpsdk.SessionCloseCapabilities{},
				// Read-only extra roots (roots.go).
				AdditionalDirectories: &acpsdk.SessionAdditionalDirectoriesCapabilities{},
			},
		},
		AuthMethods: []acpsdk.AuthMethod{},
		AgentInfo:   &acpsdk.Implementation{Name: "loom-lsp", Title: acpsdk.Ptr("Loom"), Version: a.version},
	}, nil
}

// Authenticate implements acpsdk.Agent: there is nothing to authenticate
// (the model's API key comes from the environment).
func (a *agent) Authenticate(context.Context, acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	return acpsdk.AuthenticateResponse{}, nil
}

// Cancel implements acpsdk.Agent: session/cancel stops the session's turn
// in flight (model stream, tools, a pending permission request); its
// session/prompt then answers cancelled.
func (a *agent) Cancel(ctx context.Context, p acpsdk.CancelNotification) error {
	if a.child(string(p.SessionId)) != nil {
		return a.cancelChild(ctx, p.SessionId)
	}
	s, err := a.liveSession(p.SessionId)
	if err != nil {
		a.log.Info("session/cancel ignored", "session", p.SessionId, "err", err)
		return nil
	}
	return s.ws.Cancel(ctx)
}

// client is the connection to the client, once Serve has set it.
func (a *agent) client() *acpsdk.AgentSideConnection {
	<-a.ready
	return a.conn
}

// gatedReader is a reader whose first Read waits until gate is closed.
type gatedReader struct {
	gate <-chan struct{}
	r    io.Reader
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.gate
	return g.r.Read(p)
}

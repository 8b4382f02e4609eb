package jsonrpc

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// DefaultCoalesceWindow is the minimum gap between two streamed-text
// notifications of one session.
const DefaultCoalesceWindow = 16 * time.Millisecond

// Options configures a Server.
type Options struct {
	// Host configures the sessions. Its Editor field is ignored: the
	// server is the editor.
	Host workspace.HostOptions
	// Logger receives the server's logs (never stdout). Default: discard.
	Logger *slog.Logger
	// Version is reported in the initialize result's serverInfo.
	Version string
	// MaxMessageSize bounds one incoming frame's body. Default
	// DefaultMaxMessageSize.
	MaxMessageSize int
	// CoalesceWindow is the minimum gap between two streamed-text
	// notifications of one session. Default DefaultCoalesceWindow.
	CoalesceWindow time.Duration
	// ClientCallTimeout bounds server-to-client requests that are not tied
	// to a session's context (window/workDoneProgress/create). Default 5 s.
	ClientCallTimeout time.Duration
	// FirstAnswerWait bounds the first window/showMessageRequest to a
	// client not known to answer one. Default DefaultFirstAnswerWait.
	FirstAnswerWait time.Duration
}

// lifecycle is where the server is in the LSP lifecycle.
type lifecycle int

const (
	lcNew         lifecycle = iota // before initialize
	lcInitialized                  // initialize answered
	lcShutdown                     // shutdown answered
)

// Server is one LSP connection: its lifecycle, its client's capabilities,
// and the workspace.Host whose sessions it serves.
type Server struct {
	opts Options
	log  *slog.Logger
	host *workspace.Host
	conn jsonrpc2.Conn
	// stream is conn's stream: streamed text is written to it directly,
	// pre-encoded (see folderOut.sendText).
	stream *frameStream

	// ctx is cancelled at teardown: every request handler and every call
	// to the client is cancelled with it.
	ctx    context.Context
	cancel context.CancelFunc

	exitOnce sync.Once
	exitCh   chan struct{} // closed by exit, end of input or a broken pipe
	exitCode int           // set before exitCh is closed

	mu    sync.Mutex
	state lifecycle
	caps  clientCaps
	asks  askState // whether the client answers window/showMessageRequest (ask.go)
	// answered: the client answered a request of ours (a result or an
	// error), so it is a client that answers requests.
	answered    atomic.Bool
	inflight    map[jsonrpc2.ID]context.CancelFunc
	initOpts    []byte    // initializationOptions, raw JSON
	initFolders []uri.URI // from initialize, started at initialized
	settings    []byte    // the loom settings last pulled (or pushed, for a client that cannot be asked)
	// userSettings: the user's own loom settings last pulled (section
	// loom.user, from a client that declared experimental.loom.userSettings).
	userSettings []byte
	// settingsPending: the settings were asked for and have not arrived.
	settingsPending bool
	// firstSettings, when not nil, is closed once the first settings
	// asked for at initialized were applied (or the asking failed):
	// commands wait for it (waitFirstSettings).
	firstSettings chan struct{}
	// settingsGen numbers the pulls, so that only the latest one applies.
	settingsGen uint64
	outboxes    map[string]*outbox        // by folder and conversation
	seqs        map[string]*atomic.Uint64 // displayMessage count, by folder
	tornDown    bool                      // the teardown has collected the outboxes; no new ones
	progress    map[string]string         // progress token -> folder, for cancel

	// inline serves textDocument/inlineCompletion and its capability
	// (inlinecompletion.go, inlineregister.go).
	inline *inlineCompletions

	bg sync.WaitGroup // goroutines the server started (cancels, outboxes)
}

// Serve runs the LSP server on rwc (stdin+stdout, or one end of a pipe)
// until the client sends exit, the input ends, the output breaks, or ctx
// is cancelled. It then cancels every turn, kills child processes (through
// Host.Close) and returns the process exit code: 0 after shutdown+exit or
// at a clean end of input, 1 for exit without shutdown or when the input
// ended inside a frame or inside malformed input. rwc is closed.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) int {
	return newServer(opts).serve(ctx, rwc)
}

func (s *Server) serve(ctx context.Context, rwc io.ReadWriteCloser) int {
	opts := s.opts
	stream := newFrameStream(rwc, opts.MaxMessageSize, s.log, func(err error) {
		s.log.Warn("output broken; shutting down", "err", err)
		s.finish(0)
	})
	stream.onEnd = func(err error) {
		switch {
		case errors.Is(err, io.EOF):
			s.log.Info("end of input; shutting down")
			s.finish(0)
		case errors.Is(err, ErrLostFrames), errors.Is(err, io.ErrUnexpectedEOF):
			// The client's last frames were cut or malformed: say so in the
			// exit status, never end silently with 0.
			s.log.Error("input ended inside a frame; shutting down", "err", err)
			s.finish(1)
		default:
			s.log.Warn("input ended", "err", err)
			s.finish(0)
		}
	}
	s.stream = stream
	s.conn = jsonrpc2.NewConn(stream, jsonrpc2.WithCodec(lspCodec{}))
	s.conn.Go(s.ctx, s.handle)
	select {
	case <-s.exitCh:
	case <-s.conn.Done():
		s.finish(0)
	case <-ctx.Done():
		s.finish(0)
	}
	s.teardown()
	return s.exitCode
}

func newServer(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.CoalesceWindow <= 0 {
		opts.CoalesceWindow = DefaultCoalesceWindow
	}
	if opts.ClientCallTimeout <= 0 {
		opts.ClientCallTimeout = 5 * time.Second
	}
	if opts.FirstAnswerWait <= 0 {
		opts.FirstAnswerWait = DefaultFirstAnswerWait
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		exitCh:   make(chan struct{}),
		inflight: map[jsonrpc2.ID]context.CancelFunc{},
		outboxes: map[string]*outbox{},
		seqs:     map[string]*atomic.Uint64{},
		progress: map[string]string{},
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	hopts := opts.Host
	hopts.Editor = &editor{s: s}
	if hopts.TrustHow == nil {
		hopts.TrustHow = s.trustHow
	}
	if hopts.Logger == nil {
		hopts.Logger = s.log
	}
	// Inline completion follows the folders' settings (registered with a
	// client that registers it dynamically).
	hopts.SettingsPublished = func() { s.inline.settingsChanged() }
	s.host = workspace.NewHost(hopts)
	s.inline = newInlineCompletions(s.host, s.log, s)
	return s
}

// finish records the exit code and starts the teardown; the first call
// wins.
func (s *Server) finish(code int) {
	s.exitOnce.Do(func() {
		s.exitCode = code
		close(s.exitCh)
	})
}

// teardown cancels every request and client call, closes the sessions
// (cancelling turns and killing their processes), flushes the outboxes and
// closes the connection.
func (s *Server) teardown() {
	s.cancel()
	s.host.Close()
	s.mu.Lock()
	boxes := make([]*outbox, 0, len(s.outboxes))
	for _, b := range s.outboxes {
		boxes = append(boxes, b)
	}
	s.outboxes = map[string]*outbox{}
	s.tornDown = true
	s.mu.Unlock()
	for _, b := range boxes {
		b.close(time.Second)
	}
	// Close waits for handlers to return; they all see s.ctx cancelled.
	done := make(chan struct{})
	go func() { _ = s.conn.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.log.Error("connection did not close in 5 s")
	}
	s.bg.Wait()
}

// go runs fn on a goroutine the teardown waits for.
func (s *Server) goBackground(fn func()) {
	s.bg.Add(1)
	go func() { defer s.bg.Done(); fn() }()
}

// notify sends a notification to the client, logging a failure.
func (s *Server) notify(ctx context.Context, method string, params any) {
	if err := s.conn.Notify(ctx, method, params); err != nil {
		s.log.Debug("notify failed", "method", method, "err", err)
	}
}

// logMessage sends window/logMessage.
func (s *Server) logMessage(typ protocol.MessageType, text string) {
	s.notify(context.Background(), protocol.MethodWindowLogMessage, &protocol.LogMessageParams{Type: typ, Message: text})
}

// showMessage sends window/showMessage.
func (s *Server) showMessage(typ protocol.MessageType, text string) {
	s.notify(context.Background(), protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: typ, Message: text})
}

// callClient makes a request to the client, cancelled with ctx or the
// server. A cancelled call sends $/cancelRequest.
func (s *Server) callClient(ctx context.Context, method string, params, result any) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	err := protocol.Call(ctx, s.conn, method, params, result)
	var wire *jsonrpc2.Error
	if err == nil || errors.As(err, &wire) {
		// The client answers requests (eglot 1.9 sends no clientInfo and
		// declares no window capability, but answers them).
		s.answered.Store(true)
	}
	return err
}

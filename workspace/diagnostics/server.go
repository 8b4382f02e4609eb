package diagnostics

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/reap"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// startTimeout bounds a server's start (initialize answered).
const startTimeout = 60 * time.Second

// settleQuiet is how long a server must be quiet about a document
// after publishing its diagnostics for them to be its answer.
const settleQuiet = 60 * time.Millisecond

// coldQuiet is the quiet asked of a server before its first answer: a
// cold server (gopls loading the workspace) publishes a first, partial
// answer and the full one later.
const coldQuiet = time.Second

// stopTimeout bounds a server's orderly shutdown before it is killed.
const stopTimeout = 2 * time.Second

// server is one running language server and what loom told it and
// heard from it.
type server struct {
	spec ServerSpec
	o    PoolOptions

	cmd  *exec.Cmd
	conn jsonrpc2.Conn
	// ready is closed once initialize was answered, or the start failed
	// (err set).
	ready chan struct{}
	err   error
	// exited is closed when the process has exited.
	exited chan struct{}
	// marker finds the server's descendants that left its group.
	marker string
	// starting bounds the start; stop cancels it.
	starting    context.Context
	cancelStart context.CancelFunc

	// warm is set once the server gave a settled answer.
	warm atomic.Bool
	// pull: the server answers textDocument/diagnostic (LSP 3.17), set
	// from its initialize result.
	pull bool
	// sendMu orders what is sent about documents.
	sendMu sync.Mutex

	mu sync.Mutex
	// docs are the documents opened in the server: their version and
	// the text last sent.
	docs map[string]*openDoc
	// published is the server's last diagnostics of each document.
	published map[string]publishedDiags
	// news is closed and replaced at each publication.
	news     chan struct{}
	idle     *time.Timer
	stopping bool
}

type openDoc struct {
	version int32
	text    string
	// pulled is the server's pulled answer for version pulledAt (0:
	// none).
	pulled   []Diagnostic
	pulledAt int32
}

type publishedDiags struct {
	version    int32
	hasVersion bool
	// seq counts the publications the server made, of any document.
	seq   uint64
	diags []Diagnostic
	// settled: the server was quiet about the document after this
	// publication (see await).
	settled bool
}

// startServer starts prog for spec in the background; forget is called
// once it has stopped.
func startServer(spec ServerSpec, prog string, o PoolOptions, forget func(*server)) *server {
	s := &server{
		spec: spec, o: o,
		ready:     make(chan struct{}),
		exited:    make(chan struct{}),
		docs:      map[string]*openDoc{},
		published: map[string]publishedDiags{},
		news:      make(chan struct{}),
		marker:    reap.NewMarker(),
	}
	s.starting, s.cancelStart = context.WithTimeout(context.Background(), startTimeout)
	go func() {
		defer s.cancelStart()
		err := s.start(prog)
		if err != nil {
			s.err = fmt.Errorf("%w: %s did not start: %v", ErrUnavailable, spec.Name, err)
			o.Log.Warn("language server did not start", "server", spec.Name, "err", err)
			s.kill()
		}
		close(s.ready)
		<-s.exited
		forget(s)
	}()
	return s
}

// pipes joins the server's stdout and stdin into one connection.
type pipes struct {
	io.Reader
	io.WriteCloser
}

func (s *server) start(prog string) error {
	cmd := exec.Command(prog, s.spec.Command[1:]...)
	cmd.Dir = s.o.Root
	cmd.Env = append(append([]string(nil), s.o.Env...), reap.Env(s.marker))
	cmd.SysProcAttr = tools.CommandProcAttr()
	cmd.Stderr = io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		close(s.exited)
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		close(s.exited)
		return err
	}
	if s.o.Wrap != nil {
		if err := s.o.Wrap(cmd); err != nil {
			close(s.exited)
			return err
		}
	}
	if err := cmd.Start(); err != nil {
		close(s.exited)
		return err
	}
	s.cmd = cmd
	go func() {
		cmd.Wait()
		close(s.exited)
	}()
	s.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(pipes{stdout, stdin}), jsonrpc2.WithCodec(codec{}))
	s.conn.Go(context.Background(), s.handle)
	ctx := s.starting
	root := uri.File(s.o.Root)
	params := map[string]any{
		"processId": nil,
		"rootUri":   root,
		"clientInfo": map[string]any{
			"name": "loom-lsp",
		},
		"capabilities": map[string]any{
			"textDocument": map[string]any{
				"publishDiagnostics": map[string]any{"versionSupport": true},
				"diagnostic":         map[string]any{"dynamicRegistration": false},
				"synchronization":    map[string]any{"didSave": false},
			},
			"workspace": map[string]any{"configuration": true, "workspaceFolders": true},
			"window":    map[string]any{"workDoneProgress": false},
		},
		"workspaceFolders": []map[string]any{{"uri": root, "name": "workspace"}},
	}
	if s.spec.InitOptions != nil {
		params["initializationOptions"] = s.spec.InitOptions
	}
	var raw jsonrpc2.RawMessage
	if _, err := s.conn.Call(ctx, protocol.MethodInitialize, params, &raw); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var res struct {
		Capabilities struct {
			DiagnosticProvider any `json:"diagnosticProvider"`
		} `json:"capabilities"`
	}
	_ = jsonUnmarshal(raw, &res)
	p := res.Capabilities.DiagnosticProvider
	s.pull = p != nil && p != false
	if err := s.conn.Notify(ctx, protocol.MethodInitialized, map[string]any{}); err != nil {
		return fmt.Errorf("initialized: %w", err)
	}
	s.mu.Lock()
	s.idle = time.AfterFunc(s.o.Idle, s.stop)
	s.mu.Unlock()
	return nil
}

// handle answers the server: its diagnostics are kept, its questions
// answered with nothing.
func (s *server) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	switch req.Method() {
	case protocol.MethodTextDocumentPublishDiagnostics:
		var p protocol.PublishDiagnosticsParams
		if err := protocol.Unmarshal(req.Params(), &p); err != nil {
			return nil, nil
		}
		s.publish(p)
		return nil, nil
	case protocol.MethodWorkspaceConfiguration:
		var p struct {
			Items []any `json:"items"`
		}
		_ = jsonUnmarshal(req.Params(), &p)
		return make([]any, len(p.Items)), nil
	}
	if req.IsCall() {
		// window/workDoneProgress/create, client/registerCapability,
		// window/showMessageRequest...: nothing to say.
		return nil, nil
	}
	return nil, nil
}

func (s *server) publish(p protocol.PublishDiagnosticsParams) {
	path := p.URI.FsPath()
	ds := make([]Diagnostic, 0, len(p.Diagnostics))
	for _, d := range p.Diagnostics {
		ds = append(ds, convert(path, d))
	}
	v, has := p.Version.Get()
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := uint64(0)
	for _, pd := range s.published {
		seq = max(seq, pd.seq)
	}
	s.published[path] = publishedDiags{version: v, hasVersion: has, seq: seq + 1, diags: ds}
	close(s.news)
	s.news = make(chan struct{})
}

// sync makes text the document's content in the server (didOpen, or
// didChange when it changed), and returns the version to wait for, and
// the publication count before it.
func (s *server) sync(ctx context.Context, path, lang, text string) (key string, want int32, seqAt uint64, sent bool, err error) {
	select {
	case <-s.ready:
	case <-ctx.Done():
		return "", 0, 0, false, fmt.Errorf("%w: %s is still starting", ErrUnavailable, s.spec.Name)
	}
	if s.err != nil {
		return "", 0, 0, false, s.err
	}
	u := uri.File(path)
	key = u.FsPath()
	// One sender at a time, so versions reach the server in order.
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return "", 0, 0, false, fmt.Errorf("%w: %s stopped", ErrUnavailable, s.spec.Name)
	}
	s.idle.Reset(s.o.Idle)
	doc := s.docs[key]
	var method string
	var params map[string]any
	switch {
	case doc == nil:
		doc = &openDoc{version: 1, text: text}
		s.docs[key] = doc
		method = protocol.MethodTextDocumentDidOpen
		params = map[string]any{"textDocument": map[string]any{"uri": u, "languageId": lang, "version": doc.version, "text": text}}
	case doc.text != text:
		doc.version++
		doc.text = text
		method = protocol.MethodTextDocumentDidChange
		params = map[string]any{"textDocument": map[string]any{"uri": u, "version": doc.version}, "contentChanges": []map[string]any{{"text": text}}}
	}
	want, seqAt = doc.version, s.published[key].seq
	s.mu.Unlock()
	if method != "" {
		if err := s.conn.Notify(ctx, method, params); err != nil {
			return "", 0, 0, false, fmt.Errorf("%w: %s: %v", ErrUnavailable, s.spec.Name, err)
		}
	}
	return key, want, seqAt, method != "", nil
}

// diagnostics sends text as the document's content and waits for the
// server's diagnostics of that version.
func (s *server) diagnostics(ctx context.Context, path, lang, text string) ([]Diagnostic, error) {
	key, want, seqAt, sent, err := s.sync(ctx, path, lang, text)
	if err != nil {
		return nil, err
	}
	if s.pull {
		if ds, ok := s.pulled(ctx, key, want); ok {
			return ds, nil
		}
	}
	s.mu.Lock()
	pd, ok := s.published[key]
	s.mu.Unlock()
	if !sent && ok && pd.settled && pd.hasVersion && pd.version == want {
		return pd.diags, nil
	}
	return s.await(ctx, key, want, seqAt, sent)
}

// pullReport is textDocument/diagnostic's answer: a full report (kind
// "full"; gopls v0.23 leaves the kind empty) with its items; loom sends
// no previousResultId, so an "unchanged" report is not expected and
// counts as no answer.
type pullReport struct {
	Kind  string                `json:"kind"`
	Items []protocol.Diagnostic `json:"items"`
}

// pulled asks the server for the document's diagnostics at version
// want (textDocument/diagnostic): its answer is definite, with no
// waiting for publications to go quiet. ok is false when the server
// did not answer with a full report (cancelled, content modified, an
// error): the caller waits for its publications instead.
func (s *server) pulled(ctx context.Context, key string, want int32) ([]Diagnostic, bool) {
	s.mu.Lock()
	doc := s.docs[key]
	if doc != nil && doc.version == want && doc.pulledAt == want {
		ds := doc.pulled
		s.mu.Unlock()
		return ds, true
	}
	s.mu.Unlock()
	var raw jsonrpc2.RawMessage
	var rep pullReport
	params := map[string]any{"textDocument": map[string]any{"uri": uri.File(key)}}
	_, err := s.conn.Call(ctx, protocol.MethodTextDocumentDiagnostic, params, &raw)
	if err == nil {
		err = protocol.Unmarshal(raw, &rep)
	}
	if err != nil || rep.Kind == "unchanged" {
		if err != nil && ctx.Err() == nil && s.o.Log != nil {
			s.o.Log.Debug("pull diagnostics failed", "server", s.spec.Name, "err", err)
		}
		return nil, false
	}
	ds := make([]Diagnostic, 0, len(rep.Items))
	for _, d := range rep.Items {
		ds = append(ds, convert(key, d))
	}
	s.mu.Lock()
	if doc := s.docs[key]; doc != nil && doc.version == want {
		doc.pulled, doc.pulledAt = ds, want
	}
	s.mu.Unlock()
	s.warm.Store(true)
	return ds, true
}

// await waits for the server's diagnostics of version want of the
// document. A server may publish a document's diagnostics in stages
// (gopls: a first answer while it loads the workspace, then the full
// one; or two at once) and may leave the version out: the answer is the
// last publication for the text sent, once the server has been quiet
// about the document for settleQuiet.
func (s *server) await(ctx context.Context, key string, want int32, seqAt uint64, sent bool) ([]Diagnostic, error) {
	var quiet <-chan time.Time
	var answer []Diagnostic
	answered := false
	for {
		s.mu.Lock()
		pd, ok := s.published[key]
		news := s.news
		s.mu.Unlock()
		if ok && pd.answers(want, seqAt, sent) && (!answered || pd.seq != seqAt) {
			answer, answered, seqAt = pd.diags, true, pd.seq
			quiet = time.After(s.quietWait())
		}
		select {
		case <-news:
		case <-quiet:
			s.settled(key, seqAt)
			return answer, nil
		case <-s.exited:
			return nil, fmt.Errorf("%w: %s exited", ErrUnavailable, s.spec.Name)
		case <-ctx.Done():
			if answered {
				return answer, nil
			}
			return nil, fmt.Errorf("%w: %s did not answer in time", ErrUnavailable, s.spec.Name)
		}
	}
}

// answers reports whether pd answers the text of version want, sent
// (or not, when the server had it already) after publication seqAt: a
// version at least want, or, without a version, any publication when
// nothing was sent, else one after seqAt.
func (pd publishedDiags) answers(want int32, seqAt uint64, sent bool) bool {
	if pd.hasVersion {
		return pd.version >= want
	}
	return !sent || pd.seq > seqAt
}

// quietWait is how long the server must be quiet about a document before
// its last publication is the answer: longer while it is still cold.
func (s *server) quietWait() time.Duration {
	if !s.warm.Load() {
		return coldQuiet
	}
	return settleQuiet
}

// settled marks the document's publication seq, the answer given, as
// settled (when none came since), and the server as warm.
func (s *server) settled(key string, seq uint64) {
	s.mu.Lock()
	if pd, ok := s.published[key]; ok && pd.seq == seq {
		pd.settled = true
		s.published[key] = pd
	}
	s.mu.Unlock()
	s.warm.Store(true)
}

func (s *server) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.stopping
}

// stop shuts the server down: shutdown and exit, then its group killed.
func (s *server) stop() {
	s.cancelStart()
	<-s.ready
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		<-s.exited
		return
	}
	s.stopping = true
	if s.idle != nil {
		s.idle.Stop()
	}
	s.mu.Unlock()
	if s.err == nil && s.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		if _, err := s.conn.Call(ctx, protocol.MethodShutdown, nil, nil); err == nil {
			_ = s.conn.Notify(ctx, protocol.MethodExit, nil)
		}
		cancel()
		select {
		case <-s.exited:
		case <-time.After(stopTimeout):
		}
	}
	s.kill()
	<-s.exited
	if s.conn != nil {
		s.conn.Close()
	}
}

// kill ends the server's process group and what left it.
func (s *server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	reap.KillMarked(s.marker, false)
}

func convert(path string, d protocol.Diagnostic) Diagnostic {
	out := Diagnostic{
		Path:     path,
		Line:     int(d.Range.Start.Line) + 1,
		Col:      int(d.Range.Start.Character) + 1,
		Severity: Severity(d.Severity),
	}
	if src, ok := d.Source.Get(); ok {
		out.Source = src
	}
	switch c := d.Code.(type) {
	case protocol.String:
		out.Code = string(c)
	case protocol.Integer:
		out.Code = strconv.FormatInt(int64(c), 10)
	}
	switch m := d.Message.(type) {
	case protocol.String:
		out.Message = string(m)
	case *protocol.MarkupContent:
		if m != nil {
			out.Message = m.Value
		}
	}
	return out
}

package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"go.uber.org/goleak"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// TestMain fails the package if any goroutine outlives its tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testClient is an ACP client in the test: it keeps the user's unsaved
// buffers (fs/read_text_file answers from them, else from the disk),
// writes like Zed does (buffer and disk), answers permission requests by
// script and records every session update. Tests wait on its records with
// a deadline, never on sleeps.
type testClient struct {
	mu          sync.Mutex
	cond        *sync.Cond
	updates     []acpsdk.SessionNotification
	buffers     map[string]string
	reads       []string
	writes      map[string]string
	permissions []acpsdk.RequestPermissionRequest
	// events is what the agent sent the client, in wire order: tool
	// calls' updates, file requests and permission requests (see
	// clientEvent, wireRecorder).
	events []clientEvent
	// wire is every session/update in wire order (updates is in the
	// order the SDK's goroutines handed them over, which may run ahead
	// of a response the test is still waking up from).
	wire []acpsdk.SessionNotification
	// permit answers a permission request; nil cancels it.
	permit func(ctx context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error)
	// denyFS refuses every fs/read_text_file and fs/write_text_file, as
	// acpx --deny-all does.
	denyFS bool
	// rawUpdates are the session/update lines whose update the SDK's
	// types lack (plan_update, plan_removed), in wire order.
	rawUpdates []string
	// lines is every line the agent wrote, in wire order.
	lines []string
}

func newTestClient() *testClient {
	c := &testClient{buffers: map[string]string{}, writes: map[string]string{}}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *testClient) changed(fn func()) {
	c.mu.Lock()
	fn()
	c.cond.Broadcast()
	c.mu.Unlock()
}

// clientEvent is one message the client got: kind "tool_call",
// "tool_call_update" (CallID, Status, Paths: the locations), "read",
// "write" (Paths: the file), "permission" (CallID), "commands" (an
// available_commands_update) or "response" (CallID: the request's id;
// Session: the session its result names, if any; Before: how many
// session updates were on the wire before it).
type clientEvent struct {
	Kind    string
	Session acpsdk.SessionId
	CallID  string
	Status  string
	Paths   []string
	Before  int
}

func (c *testClient) ReadTextFile(_ context.Context, p acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	c.reads = append(c.reads, p.Path)
	text, ok := c.buffers[p.Path]
	deny := c.denyFS
	c.mu.Unlock()
	if deny {
		return acpsdk.ReadTextFileResponse{}, acpsdk.NewInternalError(map[string]any{"error": "permission denied by the user"})
	}
	if !ok {
		b, err := os.ReadFile(p.Path)
		if err != nil {
			return acpsdk.ReadTextFileResponse{}, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
		}
		text = string(b)
	}
	return acpsdk.ReadTextFileResponse{Content: text}, nil
}

func (c *testClient) WriteTextFile(_ context.Context, p acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	deny := c.denyFS
	c.mu.Unlock()
	if deny {
		return acpsdk.WriteTextFileResponse{}, acpsdk.NewInternalError(map[string]any{"error": "permission denied by the user"})
	}
	if err := os.WriteFile(p.Path, []byte(p.Content), 0o644); err != nil {
		return acpsdk.WriteTextFileResponse{}, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	c.changed(func() { c.writes[p.Path] = p.Content; c.buffers[p.Path] = p.Content })
	return acpsdk.WriteTextFileResponse{}, nil
}

func (c *testClient) RequestPermission(ctx context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	c.changed(func() { c.permissions = append(c.permissions, p) })
	c.mu.Lock()
	permit := c.permit
	c.mu.Unlock()
	if permit == nil {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Cancelled: &acpsdk.RequestPermissionOutcomeCancelled{}}}, nil
	}
	return permit(ctx, p)
}

func (c *testClient) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) error {
	c.changed(func() { c.updates = append(c.updates, n) })
	return nil
}

// wireRecorder passes the agent's output on and records, in the order
// they are on the wire, the client events its lines carry: the SDK's
// client handles requests and notifications on goroutines of their own,
// so only the wire tells their order.
type wireRecorder struct {
	w       io.Writer
	c       *testClient
	partial []byte
}

func (r *wireRecorder) Write(p []byte) (int, error) {
	r.partial = append(r.partial, p...)
	for {
		i := bytes.IndexByte(r.partial, '\n')
		if i < 0 {
			break
		}
		line := r.partial[:i]
		ev, ok := wireEvent(line)
		n, isUpdate := wireUpdate(line)
		raw := bytes.Contains(line, []byte(`"method":"session/update"`)) && bytes.Contains(line, []byte(`"sessionUpdate":"plan_`))
		text := string(line)
		r.c.changed(func() {
			r.c.lines = append(r.c.lines, text)
			if raw {
				r.c.rawUpdates = append(r.c.rawUpdates, text)
			}
			if isUpdate {
				r.c.wire = append(r.c.wire, n)
			}
			if ok {
				ev.Before = len(r.c.wire)
				r.c.events = append(r.c.events, ev)
			}
		})
		r.partial = r.partial[i+1:]
	}
	return r.w.Write(p)
}

// wireUpdate is the session/update one line the agent wrote carries.
func wireUpdate(line []byte) (acpsdk.SessionNotification, bool) {
	var msg struct {
		Method string                     `json:"method"`
		Params acpsdk.SessionNotification `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Method != acpsdk.ClientMethodSessionUpdate {
		return acpsdk.SessionNotification{}, false
	}
	return msg.Params, true
}

// updatesBeforeLastResponse is the session updates the agent wrote
// before its latest response, in wire order.
func (c *testClient) updatesBeforeLastResponse() []acpsdk.SessionNotification {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.events) - 1; i >= 0; i-- {
		if c.events[i].Kind == "response" {
			return append([]acpsdk.SessionNotification(nil), c.wire[:c.events[i].Before]...)
		}
	}
	return nil
}

// wireEvent is the client event of one line the agent wrote.
func wireEvent(line []byte) (clientEvent, bool) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(line, &msg) != nil {
		return clientEvent{}, false
	}
	switch msg.Method {
	case "":
		// A response: its session when its result names one.
		var r struct {
			SessionID acpsdk.SessionId `json:"sessionId"`
		}
		_ = json.Unmarshal(msg.Result, &r)
		return clientEvent{Kind: "response", Session: r.SessionID, CallID: string(msg.ID)}, len(msg.ID) > 0
	case acpsdk.ClientMethodSessionUpdate:
		var n acpsdk.SessionNotification
		if json.Unmarshal(msg.Params, &n) != nil {
			return clientEvent{}, false
		}
		if n.Update.AvailableCommandsUpdate != nil {
			return clientEvent{Kind: "commands", Session: n.SessionId}, true
		}
		return toolEvent(n)
	case acpsdk.ClientMethodFsReadTextFile:
		var p acpsdk.ReadTextFileRequest
		_ = json.Unmarshal(msg.Params, &p)
		return clientEvent{Kind: "read", Session: p.SessionId, Paths: []string{p.Path}}, true
	case acpsdk.ClientMethodFsWriteTextFile:
		var p acpsdk.WriteTextFileRequest
		_ = json.Unmarshal(msg.Params, &p)
		return clientEvent{Kind: "write", Session: p.SessionId, Paths: []string{p.Path}}, true
	case acpsdk.ClientMethodSessionRequestPermission:
		var p acpsdk.RequestPermissionRequest
		_ = json.Unmarshal(msg.Params, &p)
		return clientEvent{Kind: "permission", Session: p.SessionId, CallID: string(p.ToolCall.ToolCallId)}, true
	}
	return clientEvent{}, false
}

// toolEvent is the clientEvent of a tool call's update.
func toolEvent(n acpsdk.SessionNotification) (clientEvent, bool) {
	paths := func(locs []acpsdk.ToolCallLocation) []string {
		var out []string
		for _, l := range locs {
			out = append(out, l.Path)
		}
		return out
	}
	switch u := n.Update; {
	case u.ToolCall != nil:
		return clientEvent{Kind: "tool_call", Session: n.SessionId, CallID: string(u.ToolCall.ToolCallId), Status: string(u.ToolCall.Status), Paths: paths(u.ToolCall.Locations)}, true
	case u.ToolCallUpdate != nil:
		st := ""
		if u.ToolCallUpdate.Status != nil {
			st = string(*u.ToolCallUpdate.Status)
		}
		return clientEvent{Kind: "tool_call_update", Session: n.SessionId, CallID: string(u.ToolCallUpdate.ToolCallId), Status: st, Paths: paths(u.ToolCallUpdate.Locations)}, true
	}
	return clientEvent{}, false
}

// eventLog returns a copy of the client's events so far.
func (c *testClient) eventLog() []clientEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]clientEvent(nil), c.events...)
}

func (c *testClient) CreateTerminal(context.Context, acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/create")
}
func (c *testClient) KillTerminal(context.Context, acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/kill")
}
func (c *testClient) TerminalOutput(context.Context, acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, acpsdk.NewMethodNotFound("terminal/output")
}
func (c *testClient) ReleaseTerminal(context.Context, acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/release")
}
func (c *testClient) WaitForTerminalExit(context.Context, acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, acpsdk.NewMethodNotFound("terminal/wait_for_exit")
}

// await blocks until cond holds for the updates so far, or fails the
// test after a deadline.
func (c *testClient) await(t *testing.T, what string, cond func([]acpsdk.SessionNotification) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	timer := time.AfterFunc(60*time.Second, func() { c.changed(func() {}) })
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for !cond(c.updates) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; updates:\n%s", what, describe(c.updates))
		}
		c.cond.Wait()
	}
}

// snapshot returns a copy of the updates so far.
func (c *testClient) snapshot() []acpsdk.SessionNotification {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]acpsdk.SessionNotification(nil), c.updates...)
}

func describe(ns []acpsdk.SessionNotification) string {
	var b strings.Builder
	for _, n := range ns {
		u := n.Update
		switch {
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			fmt.Fprintf(&b, "  agent %q\n", u.AgentMessageChunk.Content.Text.Text)
		case u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil:
			fmt.Fprintf(&b, "  user %q\n", u.UserMessageChunk.Content.Text.Text)
		case u.ToolCall != nil:
			fmt.Fprintf(&b, "  tool_call %s %s %q %s\n", u.ToolCall.ToolCallId, u.ToolCall.Kind, u.ToolCall.Title, u.ToolCall.Status)
		case u.ToolCallUpdate != nil:
			st := ""
			if u.ToolCallUpdate.Status != nil {
				st = string(*u.ToolCallUpdate.Status)
			}
			fmt.Fprintf(&b, "  tool_call_update %s %s\n", u.ToolCallUpdate.ToolCallId, st)
		case u.AvailableCommandsUpdate != nil:
			var names []string
			for _, c := range u.AvailableCommandsUpdate.AvailableCommands {
				names = append(names, "/"+c.Name)
			}
			fmt.Fprintf(&b, "  commands %s\n", strings.Join(names, " "))
		case u.SessionInfoUpdate != nil && u.SessionInfoUpdate.Title != nil:
			fmt.Fprintf(&b, "  title %q\n", *u.SessionInfoUpdate.Title)
		case u.UsageUpdate != nil:
			fmt.Fprintf(&b, "  usage %d/%d\n", u.UsageUpdate.Used, u.UsageUpdate.Size)
		case u.CurrentModeUpdate != nil:
			fmt.Fprintf(&b, "  mode %s\n", u.CurrentModeUpdate.CurrentModeId)
		case u.Plan != nil:
			var items []string
			for _, e := range u.Plan.Entries {
				items = append(items, string(e.Status)+":"+e.Content)
			}
			fmt.Fprintf(&b, "  plan %s\n", strings.Join(items, "; "))
		default:
			fmt.Fprintf(&b, "  other update\n")
		}
	}
	return b.String()
}

// agentText is the agent's streamed text in ns, loom's notices left out
// (a message of their own, tagged in _meta).
func agentText(ns []acpsdk.SessionNotification) string {
	var b strings.Builder
	for _, n := range ns {
		if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil && noticeKind(n) == "" {
			b.WriteString(c.Content.Text.Text)
		}
	}
	return b.String()
}

// noticeKind is the kind of loom notice n is (_meta.loom.notice on an
// agent message chunk), "" for none.
func noticeKind(n acpsdk.SessionNotification) string {
	c := n.Update.AgentMessageChunk
	if c == nil {
		return ""
	}
	loom, _ := c.Meta["loom"].(map[string]any)
	kind, _ := loom["notice"].(string)
	return kind
}

// notices are the texts of the loom notices in ns of session id.
func notices(ns []acpsdk.SessionNotification, id acpsdk.SessionId) []string {
	var out []string
	for _, n := range ns {
		if noticeKind(n) != "" && n.SessionId == id && n.Update.AgentMessageChunk.Content.Text != nil {
			out = append(out, n.Update.AgentMessageChunk.Content.Text.Text)
		}
	}
	return out
}

// harness runs Serve in-process, connected over pipes to a client side
// connection of the SDK.
type harness struct {
	t        *testing.T
	conn     *acpsdk.ClientSideConnection
	client   *testClient
	stateDir string
	toAgent  *io.PipeWriter
	served   chan struct{}
}

// agentConfig is the configuration of the agent's sessions: the scripted
// model in script, bash under "ask", and tweak's changes.
func agentConfig(script string, tweak func(*config.Config)) func(string, []config.Override) (config.Config, error) {
	return func(string, []config.Override) (config.Config, error) {
		cfg := config.Default()
		cfg.Model.Provider = config.ProviderScript
		cfg.Model.Script = script
		cfg.Model.Name = "scripted"
		cfg.Tools.Bash = config.PolicyAsk
		if tweak != nil {
			tweak(&cfg)
		}
		return cfg, nil
	}
}

// writeScript writes a scripted model (see llm/testdata/README.md).
func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "model.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// start starts an agent with a new client; stateDir "" makes a new one.
func start(t *testing.T, script, stateDir string, tweak func(*config.Config)) *harness {
	t.Helper()
	return startWith(t, stateDir, agentConfig(script, tweak))
}

// startWith starts an agent whose sessions load their configuration with
// load.
func startWith(t *testing.T, stateDir string, load func(string, []config.Override) (config.Config, error)) *harness {
	t.Helper()
	return startWithInput(t, stateDir, load, nil)
}

// startWithInput is startWith whose agent reads the client's messages
// through wrap (nil: as they are), for what the SDK's client cannot say.
func startWithInput(t *testing.T, stateDir string, load func(string, []config.Override) (config.Config, error), wrap func(io.Reader) io.Reader) *harness {
	t.Helper()
	if stateDir == "" {
		stateDir = t.TempDir()
	}
	pipeIn, toAgent := io.Pipe()
	var agentIn io.Reader = pipeIn
	if wrap != nil {
		agentIn = wrap(pipeIn)
	}
	fromAgent, agentOut := io.Pipe()
	h := &harness{t: t, client: newTestClient(), stateDir: stateDir, toAgent: toAgent, served: make(chan struct{})}
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	go func() {
		defer close(h.served)
		Serve(context.Background(), agentIn, &wireRecorder{w: agentOut, c: h.client}, Options{
			Host:    workspace.HostOptions{StateDir: stateDir, Config: load, Getenv: func(string) string { return "" }},
			Version: "test",
			Logger:  logger,
		})
		agentOut.Close()
	}()
	h.conn = acpsdk.NewClientSideConnection(h.client, toAgent, fromAgent)
	h.conn.SetLogger(logger)
	t.Cleanup(h.stop)
	return h
}

// stop closes the agent's stdin and waits for it to finish.
func (h *harness) stop() {
	h.toAgent.Close()
	select {
	case <-h.served:
	case <-time.After(15 * time.Second):
		h.t.Errorf("the agent did not stop after stdin closed")
	}
	<-h.conn.Done()
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// ctx is a test's deadline for one request.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// initialize initializes with the given file capabilities.
func (h *harness) initialize(read, write bool) acpsdk.InitializeResponse {
	h.t.Helper()
	resp, err := h.conn.Initialize(testCtx(h.t), acpsdk.InitializeRequest{
		ProtocolVersion:    acpsdk.ProtocolVersionNumber,
		ClientCapabilities: acpsdk.ClientCapabilities{Fs: acpsdk.FileSystemCapabilities{ReadTextFile: read, WriteTextFile: write}},
		ClientInfo:         &acpsdk.Implementation{Name: "test-client", Version: "1"},
	})
	if err != nil {
		h.t.Fatalf("initialize: %v", err)
	}
	return resp
}

func (h *harness) newSession(cwd string) acpsdk.SessionId {
	h.t.Helper()
	resp, err := h.conn.NewSession(testCtx(h.t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		h.t.Fatalf("session/new: %v", err)
	}
	return resp.SessionId
}

func (h *harness) prompt(id acpsdk.SessionId, text string) (acpsdk.PromptResponse, error) {
	return h.conn.Prompt(testCtx(h.t), acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(text)}})
}

func (h *harness) mustPrompt(id acpsdk.SessionId, text string, want acpsdk.StopReason) {
	h.t.Helper()
	resp, err := h.prompt(id, text)
	if err != nil {
		h.t.Fatalf("session/prompt %q: %v\nupdates:\n%s", text, err, describe(h.client.snapshot()))
	}
	if resp.StopReason != want {
		h.t.Fatalf("session/prompt %q: stopReason %q, want %q\nupdates:\n%s", text, resp.StopReason, want, describe(h.client.snapshot()))
	}
}

func repo(t *testing.T, files map[string]string) string { return gittest.Repo(t, files) }

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/internal/proctest"
)

// acpClient is a small ACP client for the binary tests: it keeps unsaved
// buffers, writes like an editor, allows every command once and records
// the agent's text.
type acpClient struct {
	mu      sync.Mutex
	buffers map[string]string
	writes  map[string]string
	text    strings.Builder
	firstAt time.Time // when the first agent text arrived
	updates chan struct{}
}

func (c *acpClient) ReadTextFile(_ context.Context, p acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.buffers[p.Path]; ok {
		return acpsdk.ReadTextFileResponse{Content: t}, nil
	}
	b, err := os.ReadFile(p.Path)
	return acpsdk.ReadTextFileResponse{Content: string(b)}, err
}

func (c *acpClient) WriteTextFile(_ context.Context, p acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes[p.Path], c.buffers[p.Path] = p.Content, p.Content
	return acpsdk.WriteTextFileResponse{}, os.WriteFile(p.Path, []byte(p.Content), 0o644)
}

func (c *acpClient) RequestPermission(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{
		Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: p.Options[0].OptionId}}}, nil
}

func (c *acpClient) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	// loom's own notices (the sandbox line, …) are messages of their
	// own, tagged in _meta; text is the agent's answer.
	if m := n.Update.AgentMessageChunk; m != nil && m.Content.Text != nil && m.Meta["loom"] == nil {
		if c.text.Len() == 0 {
			c.firstAt = time.Now()
		}
		c.text.WriteString(m.Content.Text.Text)
	}
	select {
	case c.updates <- struct{}{}:
	default:
	}
	return nil
}

func (c *acpClient) CreateTerminal(context.Context, acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/create")
}
func (c *acpClient) KillTerminal(context.Context, acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/kill")
}
func (c *acpClient) TerminalOutput(context.Context, acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, acpsdk.NewMethodNotFound("terminal/output")
}
func (c *acpClient) ReleaseTerminal(context.Context, acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/release")
}
func (c *acpClient) WaitForTerminalExit(context.Context, acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, acpsdk.NewMethodNotFound("terminal/wait_for_exit")
}

// acpProcess is `loom-lsp acp` running with a client on its real stdio.
type acpProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	conn   *acpsdk.ClientSideConnection
	client *acpClient
	lines  *bytes.Buffer // every byte the agent wrote to stdout
	linesM *sync.Mutex
	stderr bytes.Buffer
	exited chan struct{}
}

func startACP(tb testing.TB, dir string, env []string, args ...string) *acpProcess {
	tb.Helper()
	return startAgent(tb, dir, env, loomBinary, append([]string{"acp"}, args...)...)
}

// startAgent starts the ACP agent bin with args, with a client on its
// stdio.
func startAgent(tb testing.TB, dir string, env []string, bin string, args ...string) *acpProcess {
	tb.Helper()
	p := &acpProcess{client: &acpClient{buffers: map[string]string{}, writes: map[string]string{}, updates: make(chan struct{}, 1)},
		lines: &bytes.Buffer{}, linesM: &sync.Mutex{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir, p.cmd.Env, p.cmd.Stderr = dir, env, &p.stderr
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p.stdin = stdin
	tee := io.TeeReader(stdout, lockedWriter{p.linesM, p.lines})
	p.conn = acpsdk.NewClientSideConnection(p.client, stdin, tee)
	p.conn.SetLogger(slog.New(slog.DiscardHandler))
	go func() { p.cmd.Wait(); close(p.exited) }()
	tb.Cleanup(func() {
		stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// closeStdin closes the agent's stdin and waits for it to exit.
func (p *acpProcess) closeStdin(tb testing.TB) int {
	tb.Helper()
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		tb.Fatalf("loom-lsp acp did not exit after stdin closed; stderr:\n%s", p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *acpProcess) initialize(tb testing.TB, ctx context.Context) {
	tb.Helper()
	_, err := p.conn.Initialize(ctx, acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber,
		ClientCapabilities: acpsdk.ClientCapabilities{Fs: acpsdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}})
	if err != nil {
		tb.Fatalf("initialize: %v; stderr:\n%s", err, p.stderr.String())
	}
}

// TestBinaryACPCoreScenario: the built binary over real stdio reads the
// client's unsaved buffer, writes through the client, streams its text,
// writes nothing but JSON-RPC on stdout and exits 0 on stdin EOF.
func TestBinaryACPCoreScenario(t *testing.T) {
	dir := testRepo(t)
	p := startACP(t, dir, isolatedEnv(t), "--script", writeScript(t, editScript))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.initialize(t, ctx)
	greet := filepath.Join(dir, "greet.txt")
	p.client.buffers[greet] = "hello, unsaved\n"
	sess, err := p.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sess.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("greet the world")}})
	if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v; stderr:\n%s", resp, err, p.stderr.String())
	}
	p.client.mu.Lock()
	text, wrote := p.client.text.String(), p.client.writes[greet]
	p.client.mu.Unlock()
	if text != "Reading.Done." {
		t.Errorf("agent text %q", text)
	}
	if wrote != "hello, world, unsaved\n" {
		t.Errorf("fs/write_text_file wrote %q, want the edit of the unsaved buffer", wrote)
	}
	if code := p.closeStdin(t); code != 0 {
		t.Fatalf("exit %d after stdin EOF; stderr:\n%s", code, p.stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(p.lines.Bytes()))
	n := 0
	for sc.Scan() {
		var m struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" {
			t.Errorf("not JSON-RPC on stdout: %q", sc.Text())
		}
		n++
	}
	if n < 5 {
		t.Errorf("only %d lines on stdout", n)
	}
}

// TestBinaryACPStdinEOFKillsTools: stdin closing while a command runs
// ends the turn, kills the command's processes and exits 0.
func TestBinaryACPStdinEOFKillsTools(t *testing.T) {
	dir, pidFile := testRepo(t), filepath.Join(t.TempDir(), "pid")
	p := startACP(t, dir, isolatedEnv(t), "--script", bashForeverScript(t, pidFile))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.initialize(t, ctx)
	sess, err := p.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	go p.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sess.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("run forever")}})
	var pid int
	deadline := time.Now().Add(15 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
		time.Sleep(10 * time.Millisecond) // polling a file the child writes
	}
	if pid == 0 {
		t.Fatalf("the command never started; stderr:\n%s", p.stderr.String())
	}
	if code := p.closeStdin(t); code != 0 {
		t.Fatalf("exit %d after stdin EOF; stderr:\n%s", code, p.stderr.String())
	}
	if alive := proctest.LivingInGroup(pid); len(alive) > 0 {
		t.Fatalf("processes of the command's group %d survived: %v", pid, alive)
	}
}

// BenchmarkACPSpawnToInitialize measures starting `loom-lsp acp` and
// getting its initialize answer.
func BenchmarkACPSpawnToInitialize(b *testing.B) {
	dir := b.TempDir()
	env := isolatedEnv(b)
	for b.Loop() {
		p := startACP(b, dir, env)
		p.initialize(b, context.Background())
		b.StopTimer()
		p.closeStdin(b)
		b.StartTimer()
	}
}

// BenchmarkACPPromptToFirstChunk measures session/prompt to the first
// agent_message_chunk, with the scripted model (no network).
func BenchmarkACPPromptToFirstChunk(b *testing.B) {
	dir := b.TempDir()
	script := filepath.Join(b.TempDir(), "model.toml")
	os.WriteFile(script, []byte("[[step]]\nrepeat = true\ntext = [\"hi\"]\n"), 0o644)
	p := startACP(b, dir, isolatedEnv(b), "--script", script)
	ctx := context.Background()
	p.initialize(b, ctx)
	sess, err := p.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for b.Loop() {
		p.client.mu.Lock()
		p.client.text.Reset()
		p.client.mu.Unlock()
		start := time.Now()
		if _, err := p.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sess.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("hi")}}); err != nil {
			b.Fatal(err)
		}
		p.client.mu.Lock()
		total += p.client.firstAt.Sub(start)
		p.client.mu.Unlock()
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-to-first-chunk/op")
}

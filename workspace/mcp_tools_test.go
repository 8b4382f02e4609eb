package workspace

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loom-lsp/loom-lsp/tools"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// TestMCPStubServer is not a test: run by a test as an MCP server (with
// LOOM_TEST_HELPER=mcpstub), it serves the tools named by its arguments
// ("many:N" stands for N tools t0…) on stdio, with the official SDK.
func TestMCPStubServer(t *testing.T) {
	if os.Getenv("LOOM_TEST_HELPER") != "mcpstub" {
		t.Skip("an MCP server for the other tests")
	}
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "stub", Version: "1"}, nil)
	var names []string
	for _, a := range flag.Args() {
		if n, ok := strings.CutPrefix(a, "many:"); ok {
			count, _ := strconv.Atoi(n)
			for i := range count {
				names = append(names, "t"+strconv.Itoa(i))
			}
			continue
		}
		names = append(names, a)
	}
	for _, name := range names {
		srv.AddTool(&mcpsdk.Tool{Name: name, Description: "stub tool " + name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
				return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "called " + name}}}, nil
			})
	}
	_ = srv.Run(context.Background(), &mcpsdk.StdioTransport{})
	os.Exit(0)
}

// stubServer is the configuration of a stub MCP server offering tools.
func stubServer(t *testing.T, tools ...string) config.MCPServer {
	t.Setenv("LOOM_STUB_MODE", "mcpstub")
	return config.MCPServer{Command: os.Args[0], Args: append([]string{"-test.run=^TestMCPStubServer$", "--"}, tools...),
		Env: map[string]string{"LOOM_TEST_HELPER": "LOOM_STUB_MODE"}, Approve: config.PolicyAllow}
}

// toolsModel answers every request with "ok", counting the tools each
// request offered.
func toolsModel(seen *atomic.Int64, names chan<- []string) funcProvider {
	return func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		seen.Store(int64(len(req.Tools)))
		var n []string
		for _, t := range req.Tools {
			n = append(n, t.Name)
		}
		select {
		case names <- n:
		default:
		}
		respond(req, emit, "ok")
	}
}

// TestMCPToolNameCollisionIsRefused: servers "a" (tool "_x") and "a_"
// (tool "x") both make the model name "a___x": the daemon does not panic
// (it lost every folder), one tool keeps the name, the other is left out
// with a notice naming both, and the rest of the tools stay.
func TestMCPToolNameCollisionIsRefused(t *testing.T) {
	var seen atomic.Int64
	names := make(chan []string, 4)
	a, a2 := stubServer(t, "_x", "y"), stubServer(t, "x")
	h := newTestHost(t, toolsModel(&seen, names), func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServer{"a": a, "a_": a2}
	})
	s, _ := h.AddFolder(t.TempDir())
	h.serverReady(t, "a")
	h.serverReady(t, "a_")
	note := h.editor.waitFor(t, "the collision notice", func(n Notification) bool {
		return n.Kind == NoteError && strings.Contains(n.Text, "a___x")
	})
	if !strings.Contains(note.Text, `a's tool "_x"`) || !strings.Contains(note.Text, `a_'s tool "x"`) {
		t.Errorf("the notice does not name both tools: %s", note.Text)
	}
	if _, err := s.Ask(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 1)
	got := strings.Join(<-names, ",")
	if strings.Count(got, "a___x") != 1 || !strings.Contains(got, "a__y") || !strings.Contains(got, "read_file") {
		t.Errorf("tools offered: %s", got)
	}
}

// TestMCPToolsCappedAt128: one server with 1,000 tools (the issue saw
// 10,000; 1,000 keeps the test quick under load) does not make
// every turn fail: the request carries at most 128 tools, the built-in
// ones among them, and the user is told how many were left out.
func TestMCPToolsCappedAt128(t *testing.T) {
	var seen atomic.Int64
	names := make(chan []string, 4)
	big := stubServer(t, "many:1000")
	h := newTestHost(t, toolsModel(&seen, names), func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServer{"big": big}
	})
	s, _ := h.AddFolder(t.TempDir())
	h.serverReady(t, "big")
	note := h.editor.waitFor(t, "the cap notice", func(n Notification) bool {
		return n.Kind == NoteError && strings.Contains(n.Text, "more tools than the 128")
	})
	if want := fmt.Sprintf("%d left out", 1000-(MaxTools-len(tools.DefaultRegistry().All())-1)); !strings.Contains(note.Text, want) {
		t.Errorf("notice %q does not say %q", note.Text, want)
	}
	if _, err := s.Ask(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 1)
	got := <-names
	if len(got) != MaxTools || !strings.Contains(strings.Join(got, ","), "bash") {
		t.Errorf("%d tools offered (want %d, bash among them)", len(got), MaxTools)
	}
}

package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/tools/mcp"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// A repository's .mcp.json (Claude Code's file, unchanged) gives its
// server to loom in a trusted folder, with the floor of a repository's
// servers: not started under tools.bash = "deny"; a server it cannot use
// is named with its file and line.
func TestMCPPeerFileServer(t *testing.T) {
	ev := mcptest.Find(t).Everything
	for _, bash := range []string{"ask", "deny"} {
		t.Run(bash, func(t *testing.T) {
			xdg := t.TempDir()
			t.Setenv("XDG_CONFIG_HOME", xdg)
			t.Setenv("HOME", t.TempDir())
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{
  "mcpServers": {
    "ev": {"command": "`+ev+`", "args": [], "env": {"GREETING": "hello"}},
    "old": {"type": "sse", "url": "https://example.com/sse"}
  }
}
`), 0o644)
			os.MkdirAll(filepath.Join(xdg, "loom"), 0o755)
			os.WriteFile(filepath.Join(xdg, "loom", "loom.toml"), []byte("[tools]\nbash = \""+bash+"\"\n[trust]\nfolders = [\""+dir+"\"]\n"), 0o644)
			ed := newRecordingEditor()
			h := NewHost(HostOptions{Editor: ed, StateDir: t.TempDir()})
			t.Cleanup(h.Close)
			s, _ := h.AddFolder(dir)
			ed.waitFor(t, "the note on the SSE server", func(n Notification) bool {
				return strings.Contains(n.Text, filepath.Join(dir, ".mcp.json")+`:4: MCP server "old" not used: its transport is SSE`)
			})
			if bash == "deny" {
				ed.waitFor(t, "the repository's server held", func(n Notification) bool {
					return n.Kind == NoteError && strings.Contains(n.Text, `MCP server "ev" of `+filepath.Join(dir, ".mcp.json")+" not started")
				})
				st, _ := s.Status(context.Background())
				if len(st.MCPServers) != 1 || st.MCPServers[0].State != mcp.StateNotStarted {
					t.Errorf("status = %+v, want ev not started", st.MCPServers)
				}
				return
			}
			(&testHost{Host: h, editor: ed}).serverReady(t, "ev")
			st, _ := s.Status(context.Background())
			if len(st.MCPServers) != 1 || st.MCPServers[0].Name != "ev" || st.MCPServers[0].State != mcp.StateReady {
				t.Errorf("status = %+v, want ev ready", st.MCPServers)
			}
		})
	}
}

package workspace

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// BenchmarkSessionStartMCP measures what two stdio MCP servers add to a
// session's start: ms-to-status is from AddFolder until the session
// answers loom.status (what a prompt waits for: nothing of MCP), and
// ms-to-tools until both servers' tools are offered (in the background).
//
//	go test -run '^$' -bench SessionStartMCP -benchmem ./workspace
func BenchmarkSessionStartMCP(b *testing.B) {
	everything := mcptest.Find(b).Everything
	for _, n := range []int{0, 2} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			servers := map[string]config.MCPServer{}
			for i := range n {
				servers[fmt.Sprintf("ev%d", i)] = config.MCPServer{Command: everything, Approve: config.PolicyAllow}
			}
			var toStatus, toTools time.Duration
			for b.Loop() {
				ed := newRecordingEditor()
				h := NewHost(HostOptions{
					Editor: ed,
					Config: func(string, []config.Override) (config.Config, error) {
						cfg := config.Default()
						cfg.MCP.Servers = servers
						return cfg, nil
					},
					StateDir: b.TempDir(),
				})
				start := time.Now()
				s, err := h.AddFolder(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Status(context.Background()); err != nil {
					b.Fatal(err)
				}
				toStatus += time.Since(start)
				for i := range n {
					ed.waitFor(b, "server ready", func(note Notification) bool {
						return note.Kind == NoteInfo && strings.HasPrefix(note.Text, fmt.Sprintf("MCP server \"ev%d\" is ready", i))
					})
				}
				toTools += time.Since(start)
				h.Close()
			}
			b.ReportMetric(float64(toStatus.Microseconds())/1000/float64(b.N), "ms-to-status")
			b.ReportMetric(float64(toTools.Microseconds())/1000/float64(b.N), "ms-to-tools")
		})
	}
}

package workspace

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/tools/mcp"
)

// mcpPoll is how often WaitMCP looks at the servers while one starts.
const mcpPoll = 20 * time.Millisecond

// WaitMCP waits until none of the session's MCP servers is still
// starting, at most mcp.startup_timeout, and takes the ready servers'
// tools in, so that the next request offers them. One-shot front ends
// (`loom-lsp exec`, an ACP prompt) call it before they ask: their first
// request would otherwise go out before any server is up. It returns the
// servers that did not come up in time, and tells the user about them;
// the LSP daemon never calls it (its later prompts see the tools once the
// servers are ready).
func (s *Conversation) WaitMCP(ctx context.Context) ([]string, error) {
	timeout := s.folder.settingsNow().cfg.MCP.WaitTimeout()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(mcpPoll)
	defer tick.Stop()
	for {
		// The folder takes the ready servers' tools in and publishes them
		// to its conversations before this returns: a prompt asked next
		// is queued behind them.
		var starting []string
		if err := s.folder.loop.call(ctx, func() {
			starting = startingServers(s.folder.mcp.Status())
			s.folder.syncMCP()
		}); err != nil {
			return nil, err
		}
		if len(starting) == 0 {
			return nil, nil
		}
		select {
		case <-tick.C:
			continue
		case <-ctx.Done():
			return starting, ctx.Err()
		case <-deadline.C:
		}
		err := s.folder.loop.call(ctx, func() {
			s.folder.notify(Notification{Kind: NoteInfo, Text: fmt.Sprintf(
				"MCP server(s) %s did not come up within %s (mcp.startup_timeout): going on without their tools",
				quoteNames(starting), timeout)})
		})
		return starting, err
	}
}

func startingServers(all []mcp.ServerStatus) []string {
	var names []string
	for _, st := range all {
		if st.State == mcp.StateStarting {
			names = append(names, st.Name)
		}
	}
	return names
}

func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

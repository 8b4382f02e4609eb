package workspace

import (
	"fmt"
	"strings"

	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/mcp"
)

// MaxTools caps the tools offered to the model in one request: OpenAI's
// API refuses more than 128, and every server we know of does the same or
// worse with a list that long.
const MaxTools = 128

// offeredTools picks the tools the model is offered: the built-in ones,
// then the MCP servers' tools (sorted by name) while their names are
// free and there is room under max. A tool whose model name another
// already took (servers "a" + tool "_x" and "a_" + "x" both make
// "a___x"), and the tools past the cap, are left out; notes says which,
// for the user. It never panics on what the servers send.
func offeredTools(builtin []tools.Tool, fromMCP []*mcp.Tool, max int) (kept []tools.Tool, notes []string) {
	taken := map[string]string{} // model name -> who has it
	for _, t := range builtin {
		kept = append(kept, t)
		taken[t.Name()] = "the built-in tool " + t.Name()
	}
	var over []string
	for _, t := range fromMCP {
		who := fmt.Sprintf("%s's tool %q", t.Server(), t.RemoteName())
		if first, dup := taken[t.Name()]; dup {
			notes = append(notes, fmt.Sprintf("MCP server %s: left out, because %s already has the tool name %s; rename one of the servers",
				who, first, t.Name()))
			continue
		}
		if len(kept) >= max {
			over = append(over, t.Name())
			continue
		}
		taken[t.Name()] = who
		kept = append(kept, t)
	}
	if len(over) > 0 {
		shown := over
		if len(shown) > 20 {
			shown = shown[:20]
		}
		more := ""
		if len(over) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(over)-len(shown))
		}
		notes = append(notes, fmt.Sprintf("the MCP servers offer more tools than the %d a model request may carry: %d left out (%s%s); "+
			"remove servers or tools you do not need", max, len(over), strings.Join(shown, ", "), more))
	}
	return kept, notes
}

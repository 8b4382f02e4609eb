// Command askserver is an MCP server over stdio whose tools ask the user
// mid-call (elicitation, form and URL modes); tests run it as a real
// process (mcptest.AskStdio).
package main

import (
	"context"
	"log"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

func main() {
	if err := mcptest.NewAskServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

package jsonrpc

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// elicitScript calls the asking server's deploy tool for "deploy." and
// its connect tool for "connect.".
const elicitScript = `
[[step]]
match.last_user_contains = "deploy."
  [[step.tool_call]]
  name = "asking__deploy"
  arguments = '{}'

[[step]]
match.last_user_contains = "connect."
  [[step.tool_call]]
  name = "asking__connect"
  arguments = '{}'

[[step]]
match.last_role = "tool"
text = ["done"]

[[step]]
match.last_role = "tool"
text = ["done again"]
`

// An MCP server's form reaches an editor that declared
// experimental.loom.elicit as loom/elicit, with the fields read from its
// schema (a go-sdk server over streamable HTTP). An answer that does not
// fit (a value not among the choices, a token too short) is not sent:
// the form comes again with the problems, the values typed kept but the
// secret's; the fitting answer reaches the server, defaults filled in.
// The tool call shows the exchange with the token masked; the journal
// records it (Elicited) and never holds the token, nor does anything the
// editor was sent. A URL-mode request shows the URL, and the answer goes
// back.
func TestElicitThroughLoomElicit(t *testing.T) {
	const token = "s3cret-token-123"
	var mu sync.Mutex
	var asked []ElicitParams
	answers := []ElicitResult{
		{Action: "accept", Values: map[string]string{"env": "qa", "api_token": "short", "note": "first try"}},
		{Action: "accept", Values: map[string]string{"env": "Production", "api_token": token, "note": "first try"}},
		{Action: "accept"},
	}
	state := t.TempDir()
	e := newEnv(t, envOptions{
		script:   elicitScript,
		cfg:      loomClient,
		stateDir: state,
		options: map[string]any{"mcp": map[string]any{"servers": map[string]any{
			"asking": map[string]any{"url": mcptest.AskHTTP(t), "approve": "allow"},
		}}},
		hooks: fakeeditor.Hooks{Elicit: func(raw json.RawMessage) any {
			var p ElicitParams
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Errorf("loom/elicit params: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, p)
			if len(asked) > len(answers) {
				return ElicitResult{Action: "cancel"}
			}
			return answers[len(asked)-1]
		}},
	})
	e.await("MCP server asking ready", hasMethod(MethodNotice, `MCP server \"asking\" is ready`))
	from := len(e.ed.Messages(""))
	e.ask("deploy.")
	e.await("the deploy turn ended", turnEnded(e.folder, from))

	mu.Lock()
	if len(asked) != 2 {
		t.Fatalf("loom/elicit asked %d times, want 2: %+v", len(asked), asked)
	}
	first, second := asked[0], asked[1]
	mu.Unlock()
	if first.Server != "asking" || first.Mode != "form" || first.Tool != "asking__deploy" || len(first.Fields) != 5 ||
		first.Fields[0].Name != "env" || first.Fields[1].Name != "api_token" || !first.Fields[1].Secret || len(first.Problems) != 0 {
		t.Errorf("first loom/elicit: %+v", first)
	}
	probs := strings.Join(second.Problems, "\n")
	if !strings.Contains(probs, `Environment: "qa" is not one of prod (Production), staging (Staging)`) ||
		!strings.Contains(probs, "API token: at least 8 characters, got 5") || second.Values["env"] != "qa" ||
		second.Values["note"] != "first try" || second.Values["api_token"] != "" {
		t.Errorf("asked again with problems %q and values %v", second.Problems, second.Values)
	}
	var call ToolCallParams
	for _, c := range toolCalls(t, e.ed.Messages("")[from:], "asking__deploy") {
		if strings.Contains(c.Progress, "accepted") {
			call = c
		}
	}
	if want := `asking asks "Deploy where, and with which token?": accepted (env=prod, api_token=••••••, note=first try, notify=true, replicas=2)`; call.Progress != want {
		t.Errorf("the call showed %q, want %q", call.Progress, want)
	}

	from = len(e.ed.Messages(""))
	e.ask("connect.")
	e.await("the connect turn ended", turnEnded(e.folder, from))
	mu.Lock()
	if len(asked) != 3 || asked[2].Mode != "url" || asked[2].URL != "https://example.com/connect?id=e1" || asked[2].Message != "Connect your account" {
		t.Errorf("URL mode asked %+v", asked[len(asked)-1])
	}
	mu.Unlock()

	for _, m := range e.ed.Messages("") {
		if strings.Contains(string(m.Params), token) {
			t.Errorf("the editor was sent the token: %s %s", m.Method, m.Params)
		}
	}
	var journal strings.Builder
	_ = filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			journal.Write(b)
		}
		return nil
	})
	j := journal.String()
	if strings.Contains(j, token) || !strings.Contains(j, `"t":"Elicited"`) || !strings.Contains(j, "••••••") ||
		!strings.Contains(j, `action=accept content={api_token=\"len16\" env=\"prod\" note=\"first try\" notify=true replicas=2}`) ||
		!strings.Contains(j, `"Action":"accept","Values":null`) {
		t.Errorf("journal (token present: %v):\n%s", strings.Contains(j, token), j)
	}
}

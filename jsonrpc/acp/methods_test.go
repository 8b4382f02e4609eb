package acp

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// The table of docs/acp.md ("Methods and updates"): every method and
// session update of ACP's stable schema and of the v2 preview, and what
// loom serves of each. The schema columns and the "why" are written
// here; the "loom" columns are computed from the code by
// TestMethodsTable:
//   - a method the client calls is served when the real Serve, asked it
//     over the wire by a v1 and by a v2 client, answers anything but
//     -32601 (the probe's params pass the SDK's validation and name no
//     session, so nothing is done);
//   - a method loom calls (session/update, fs/…) is served when this
//     package's code calls the SDK client's method of that name;
//   - an update is served on v1 when this package's code (not the v2
//     files) makes it: the SDK's constructor, or a SessionUpdate: "kind"
//     field; on v2 when the v2 mapping (mapUpdate) keeps a v1 update
//     that becomes it, or v2state.go makes it.
// Names from @agentclientprotocol/sdk 2.4.0 schema/v1, schema/v2 (and
// their schema.unstable.json); the drafts from the Session Rewind RFD.
//
// Rewrite docs/acp.md's section: LOOM_WRITE_DOCS=1 go test ./jsonrpc/acp -run TestMethodsTable

type methodRow struct {
	name   string
	dir    string // "→agent" (the client calls it), "→client" (loom calls it), "update"
	v1, v2 string // in the schema: "stable", "unstable", "draft" or ""
	why    string
}

var methodRows = []methodRow{
	{"initialize", "→agent", "stable", "stable", "v2 when protocolVersion ≥ 2"},
	{"authenticate", "→agent", "stable", "", "no-op: no auth methods (API key from the environment)"},
	{"logout", "→agent", "stable", "", "nothing to log out of"},
	{"auth/login", "→agent", "", "stable", "no auth methods"},
	{"auth/logout", "→agent", "", "stable", "no auth methods"},
	{"auth/status", "→agent", "unstable", "unstable", "no auth methods"},
	{"session/new", "→agent", "stable", "stable", "+ systemPrompt; updates held until its response"},
	{"session/load", "→agent", "stable", "", "v2: session/resume with replayFrom"},
	{"session/resume", "→agent", "stable", "stable", "v2 replayFrom {type:start}; other cursors -32602"},
	{"session/list", "→agent", "stable", "stable", ""},
	{"session/close", "→agent", "stable", "stable", ""},
	{"session/delete", "→agent", "stable", "stable", ""},
	{"session/prompt", "→agent", "stable", "stable", "v2: accepted at once {messageId}, then state_update"},
	{"session/cancel", "→agent", "stable", "stable", "notification"},
	{"session/set_mode", "→agent", "stable", "", "v2: the mode config option"},
	{"session/set_config_option", "→agent", "stable", "stable", "model, mode, effort"},
	{"session/set_model", "→agent", "", "", "the SDK's unstable method; Zed uses it"},
	{"session/fork", "→agent", "unstable", "unstable", "not in scope"},
	{"session/set_title", "→agent", "unstable", "unstable", "not in scope"},
	{"session/status", "→agent", "unstable", "unstable", "not in scope"},
	{"session/archive", "→agent", "unstable", "unstable", "not in scope"},
	{"session/unarchive", "→agent", "unstable", "unstable", "not in scope"},
	{"session/rewind", "→agent", "draft", "draft", "to an agent message; a prompt id → -32602 (use edit_prompt)"},
	{"session/edit_prompt", "→agent", "draft", "draft", "rewinds conversation + files (user's edits kept), runs the new prompt"},
	{"tool_call/cancel", "→agent", "", "stable", "cancel is per session"},
	{"terminal/cancel", "→agent", "", "stable", "no client terminals"},
	{"providers/list", "→agent", "unstable", "unstable", "not in scope (model from loom.toml)"},
	{"providers/set", "→agent", "unstable", "unstable", "not in scope"},
	{"providers/disable", "→agent", "unstable", "unstable", "not in scope"},
	{"mcp/message", "→agent", "unstable", "unstable", "MCP servers run by loom itself"},
	{"proxy/initialize", "→agent", "unstable", "unstable", "not in scope"},
	{"proxy/successor", "→agent", "unstable", "unstable", "not in scope"},
	{"session/update", "→client", "stable", "stable", ""},
	{"session/request_permission", "→client", "stable", "stable", "v2: title + subject"},
	{"fs/read_text_file", "→client", "stable", "", "v1 clients with fs: the editor's buffer"},
	{"fs/write_text_file", "→client", "stable", "", "v1 clients with fs"},
	{"terminal/create", "→client", "stable", "", "bash runs the command itself, sandboxed"},
	{"terminal/output", "→client", "stable", "", "no client terminals"},
	{"terminal/wait_for_exit", "→client", "stable", "", "no client terminals"},
	{"terminal/kill", "→client", "stable", "", "no client terminals"},
	{"terminal/release", "→client", "stable", "", "no client terminals"},
	{"elicitation/create", "→client", "stable", "stable", "MCP elicitation handled in loom, not bridged"},
	{"elicitation/complete", "→client", "stable", "stable", "MCP elicitation handled in loom, not bridged"},
	{"auth/status_update", "→client", "unstable", "unstable", "no auth methods"},
	{"user_message_chunk", "update", "stable", "stable", "history replay; v2 with messageId"},
	{"agent_message_chunk", "update", "stable", "stable", "messageId per turn; notices tagged _meta.loom.notice"},
	{"agent_thought_chunk", "update", "stable", "stable", ""},
	{"tool_call", "update", "stable", "", "v2: upserted tool_call_update"},
	{"tool_call_update", "update", "stable", "stable", "v2 diffs as {changes, patch}"},
	{"plan", "update", "stable", "", "clients without clientCapabilities.plan"},
	{"plan_update", "update", "unstable", "stable", "clientCapabilities.plan (every v2 client)"},
	{"plan_removed", "update", "unstable", "unstable", "v2: only in the unstable schema, not sent to v2 clients"},
	{"available_commands_update", "update", "stable", "stable", "after the response naming the session"},
	{"current_mode_update", "update", "stable", "", "v2: config_option_update"},
	{"config_option_update", "update", "stable", "stable", ""},
	{"session_info_update", "update", "stable", "stable", "title"},
	{"usage_update", "update", "stable", "stable", "after the response naming the session"},
	{"notice", "update", "stable", "stable", "loom's notices are agent_message_chunk tagged _meta.loom.notice"},
	{"compaction_update", "update", "stable", "stable", "compaction shown as a thought"},
	{"compaction_summary_chunk", "update", "stable", "stable", "compaction shown as a thought"},
	{"subagent_update", "update", "unstable", "unstable", "children's sessions (docs/subagents.md); v2: unstable only, not sent"},
	{"session_message", "update", "unstable", "unstable", "not in scope"},
	{"session_message_chunk", "update", "unstable", "unstable", "not in scope"},
	{"state_update", "update", "", "stable", "running, requires_action, idle"},
	{"user_message", "update", "", "stable", "the prompt's echo, before the turn's updates"},
	{"agent_message", "update", "", "stable", "loom streams chunks"},
	{"agent_thought", "update", "", "stable", "loom streams chunks"},
	{"tool_call_content_chunk", "update", "", "stable", "loom streams chunks"},
	{"terminal_update", "update", "", "stable", "no client terminals"},
	{"terminal_output_chunk", "update", "", "stable", "no client terminals"},
}

// sdkAgentMethods are the methods the SDK (v0.13.0, constants_gen.go)
// dispatches to an agent.
var sdkAgentMethods = []string{
	acpsdk.AgentMethodAuthenticate, acpsdk.AgentMethodDocumentDidChange, acpsdk.AgentMethodDocumentDidClose,
	acpsdk.AgentMethodDocumentDidFocus, acpsdk.AgentMethodDocumentDidOpen, acpsdk.AgentMethodDocumentDidSave,
	acpsdk.AgentMethodInitialize, acpsdk.AgentMethodLogout, acpsdk.AgentMethodMcpMessage, acpsdk.AgentMethodNesAccept,
	acpsdk.AgentMethodNesClose, acpsdk.AgentMethodNesReject, acpsdk.AgentMethodNesStart, acpsdk.AgentMethodNesSuggest,
	acpsdk.AgentMethodProvidersDisable, acpsdk.AgentMethodProvidersList, acpsdk.AgentMethodProvidersSet,
	acpsdk.AgentMethodSessionCancel, acpsdk.AgentMethodSessionClose, acpsdk.AgentMethodSessionFork,
	acpsdk.AgentMethodSessionList, acpsdk.AgentMethodSessionLoad, acpsdk.AgentMethodSessionNew,
	acpsdk.AgentMethodSessionPrompt, acpsdk.AgentMethodSessionResume, acpsdk.AgentMethodSessionSetConfigOption,
	acpsdk.AgentMethodSessionSetMode, acpsdk.AgentMethodSessionSetModel,
}

// sdkClientMethods are the SDK client's Go methods, by ACP method.
var sdkClientMethods = map[string]string{
	"SessionUpdate": "session/update", "RequestPermission": "session/request_permission",
	"ReadTextFile": "fs/read_text_file", "WriteTextFile": "fs/write_text_file",
	"CreateTerminal": "terminal/create", "TerminalOutput": "terminal/output",
	"WaitForTerminalExit": "terminal/wait_for_exit", "KillTerminalCommand": "terminal/kill",
	"ReleaseTerminal": "terminal/release", "CreateElicitation": "elicitation/create",
	"CompleteElicitation": "elicitation/complete",
}

// sdkUpdates are the SDK's update constructors, by update.
var sdkUpdates = map[string]string{
	"UpdateAgentMessage": "agent_message_chunk", "UpdateAgentMessageText": "agent_message_chunk",
	"UpdateAgentThought": "agent_thought_chunk", "UpdateAgentThoughtText": "agent_thought_chunk",
	"UpdateUserMessage": "user_message_chunk", "UpdateUserMessageText": "user_message_chunk",
	"StartToolCall": "tool_call", "UpdateToolCall": "tool_call_update", "UpdatePlan": "plan",
}

// sourceFacts reads this package's code: per file, its string literals,
// the SDK functions it calls (acpsdk.X) and the methods it calls on a
// call's result (a.client().X).
type sourceFacts struct {
	literals map[string]map[string]bool // file → literal
	kinds    map[string]map[string]bool // file → the value of a SessionUpdate: "…" field
	sdkCalls map[string]bool
	onCalls  map[string]bool
}

func readSources(t *testing.T) sourceFacts {
	t.Helper()
	f := sourceFacts{literals: map[string]map[string]bool{}, kinds: map[string]map[string]bool{}, sdkCalls: map[string]bool{}, onCalls: map[string]bool{}}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		lits := map[string]bool{}
		f.literals[name] = lits
		kinds := map[string]bool{}
		f.kinds[name] = kinds
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
					lits[s] = true
				}
			case *ast.KeyValueExpr:
				key, _ := n.Key.(*ast.Ident)
				if lit, ok := n.Value.(*ast.BasicLit); ok && key != nil && key.Name == "SessionUpdate" && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					kinds[v] = true
				}
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && id.Name == "acpsdk" {
					f.sdkCalls[n.Sel.Name] = true
				}
				if _, ok := n.X.(*ast.CallExpr); ok {
					f.onCalls[n.Sel.Name] = true
				}
			}
			return true
		})
	}
	return f
}

// probeMethods asks the real Serve each method over the wire, as a
// client of protocol version v; served is "not -32601".
func probeMethods(t *testing.T, v int, names []string) map[string]bool {
	c := startV2(t, writeScript(t, v2Script), "")
	if v == 2 {
		c.mustCall("initialize", map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "probe", "version": "1"}, "capabilities": map[string]any{}}, nil)
	} else {
		c.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil)
	}
	params := map[string]any{"sessionId": "probe-none", "cwd": "/nonexistent-probe", "mcpServers": []any{}, "prompt": []any{},
		"modeId": "x", "configId": "x", "value": "x", "modelId": "x", "methodId": "x", "toMessageId": "x", "messageId": "x",
		"newContent": []any{}, "protocolVersion": v, "requestId": 0, "toolCallId": "x", "terminalId": "x", "providerId": "x", "title": "x"}
	served := map[string]bool{}
	for _, m := range names {
		if m == "initialize" {
			served[m] = true // answered above
			continue
		}
		served[m] = probe(c, m, params)
	}
	return served
}

var (
	sdkRequired = regexp.MustCompile(`(\w+) is required`)
	sdkType     = regexp.MustCompile(`json: cannot unmarshal \w+ into Go struct field [\w.]*?(\w+) of type (\S+)`)
)

// probe calls m with params; the SDK checks params before it asks
// whether loom implements m, so what it finds missing or mistyped is
// filled in and m asked again.
func probe(c *rawClient, m string, base map[string]any) bool {
	params := map[string]any{}
	for k, v := range base {
		params[k] = v
	}
	for range 10 {
		_, e, _ := c.call(m, params)
		if e == nil {
			return true
		}
		if e.Code == -32601 {
			return false
		}
		text := fmt.Sprint(e.Message, e.Data)
		if f := sdkRequired.FindStringSubmatch(text); f != nil && params[f[1]] == nil {
			params[f[1]] = "x"
			continue
		}
		if f := sdkType.FindStringSubmatch(text); f != nil {
			var v any = map[string]any{}
			switch {
			case strings.HasPrefix(f[2], "[]"):
				v = []any{}
			case strings.HasPrefix(f[2], "int") || strings.HasPrefix(f[2], "float"):
				v = 0
			case f[2] == "bool":
				v = false
			}
			key := strings.ToLower(f[1][:1]) + f[1][1:]
			if fmt.Sprint(params[key]) != fmt.Sprint(v) {
				params[key] = v
				continue
			}
		}
		return true
	}
	return true
}

// TestMethodsTable computes what loom serves, fails when the code
// serves a method or update the table lacks, and when docs/acp.md's
// table is not the one the code gives.
func TestMethodsTable(t *testing.T) {
	src := readSources(t)
	rows := map[string]methodRow{}
	var agentMethods []string
	for _, r := range methodRows {
		rows[r.name] = r
		if r.dir == "→agent" {
			agentMethods = append(agentMethods, r.name)
		}
	}
	// Every method name the SDK dispatches or this package mentions is
	// probed too: one served but not in the table fails.
	candidates := append([]string{}, agentMethods...)
	for _, lits := range src.literals {
		for s := range lits {
			if strings.Count(s, "/") >= 1 && !strings.ContainsAny(s, " .%:\"\n") && !strings.HasPrefix(s, "_") && !strings.HasPrefix(s, "/") && rows[s].name == "" {
				candidates = append(candidates, s)
			}
		}
	}
	candidates = append(candidates, sdkAgentMethods...)
	sort.Strings(candidates)
	served := map[int]map[string]bool{1: probeMethods(t, 1, candidates), 2: probeMethods(t, 2, candidates)}
	for _, m := range candidates {
		if rows[m].name == "" && (served[1][m] || served[2][m]) {
			t.Errorf("%s is served but not in the table (methodRows)", m)
		}
	}
	// $/cancel_request is a notification the SDK's connection handles.
	served[1]["$/cancel_request"], served[2]["$/cancel_request"] = true, true

	for sel, m := range sdkClientMethods {
		if src.onCalls[sel] {
			served[1][m] = true
			served[2][m] = rows[m].v2 != ""
		}
	}
	v1Updates := map[string]bool{}
	for sel, u := range sdkUpdates {
		if src.sdkCalls[sel] {
			v1Updates[u] = true
		}
	}
	for file, lits := range src.kinds {
		if strings.HasPrefix(file, "v2") {
			continue
		}
		for _, r := range methodRows {
			if r.dir == "update" && lits[r.name] {
				v1Updates[r.name] = true
			}
		}
	}
	for u := range v1Updates {
		if rows[u].name == "" {
			t.Errorf("update %s is made but not in the table", u)
		}
		served[1][u] = true
		into := u
		if u == "tool_call" {
			into = "tool_call_update"
		}
		if (&protocol{}).mapUpdate("s", u, map[string]json.RawMessage{}) {
			served[2][into] = true
		}
	}
	for _, r := range methodRows {
		if r.dir == "update" && src.kinds["v2state.go"][r.name] {
			served[2][r.name] = true
		}
	}

	got := renderMethodsTable(served)
	docs := filepath.Join("..", "..", "docs", "acp.md")
	b, err := os.ReadFile(docs)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- methods table: generated by TestMethodsTable (jsonrpc/acp/methods_test.go) -->\n", "<!-- end of the methods table -->\n"
	i, j := strings.Index(string(b), begin), strings.Index(string(b), end)
	if i < 0 || j < i {
		t.Fatalf("docs/acp.md has no methods table between %q and %q", begin, end)
	}
	if have := string(b[i+len(begin) : j]); have != got {
		if os.Getenv("LOOM_WRITE_DOCS") == "1" {
			if err := os.WriteFile(docs, []byte(string(b[:i+len(begin)])+got+string(b[j:])), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/acp.md's methods table is not what the code serves; rewrite it with LOOM_WRITE_DOCS=1 go test ./jsonrpc/acp -run TestMethodsTable\nwant:\n%s", got)
	}
}

// renderMethodsTable is the Markdown table of methodRows with served.
func renderMethodsTable(served map[int]map[string]bool) string {
	var b strings.Builder
	b.WriteString("| method / update | dir | v1 schema | v2 schema | loom v1 | loom v2 | why |\n|---|---|---|---|---|---|---|\n")
	cell := func(schema string, on bool) string {
		switch {
		case on:
			return "served"
		case schema == "":
			return ""
		}
		return "no"
	}
	for _, r := range methodRows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.name, r.dir, r.v1, r.v2,
			cell(r.v1, served[1][r.name]), cell(r.v2, served[2][r.name]), r.why)
	}
	return b.String()
}

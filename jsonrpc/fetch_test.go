package jsonrpc

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// fetchScript is a model that, for the prompt "fetch N.", fetches
// urls[N], then says "done N".
func fetchScript(urls ...string) string {
	var b strings.Builder
	for i, u := range urls {
		fmt.Fprintf(&b, "[[step]]\nmatch.last_user_contains = %q\n  [[step.tool_call]]\n  name = \"fetch\"\n  arguments = '{\"url\":%q}'\n\n", fmt.Sprintf("fetch %d.", i), u)
		fmt.Fprintf(&b, "[[step]]\nmatch.last_role = \"tool\"\ntext = [%q]\n\n", fmt.Sprintf("done %d", i))
	}
	return b.String()
}

// TestFetchApproval: under tools.fetch = "ask" the editor is asked with
// the URL; "Always allow" keeps the host for the folder, so the next
// fetch from it runs unasked, while another host is asked again; a
// denial reaches the model and the server is not reached.
func TestFetchApproval(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "page "+r.URL.Path)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	one, two := "http://localhost:"+u.Port()+"/one", "http://localhost:"+u.Port()+"/two"
	other := "http://127.0.0.1:" + u.Port() + "/three"
	an := &answerer{}
	e := newEnv(t, envOptions{
		script:  fetchScript(one, two, other, two),
		cfg:     loomClient,
		options: map[string]any{"tools": map[string]any{"fetch": "ask", "fetch_private": []string{"localhost", "127.0.0.1"}}},
		hooks:   fakeeditor.Hooks{RawShowMessageRequest: an.hook},
	})
	turn := func(n int) ToolCallParams {
		from := len(e.ed.Messages(""))
		res := e.ask(fmt.Sprintf("fetch %d.", n))
		e.await(fmt.Sprintf("turn %d ended", n), turnEnded(e.folder, from))
		var last ToolCallParams
		for _, c := range toolCalls(e.t, e.ed.Messages("")[from:], "fetch") {
			if c.Turn == res.Turn {
				last = c
			}
		}
		return last
	}

	an.choose = func(a approvalAsked) any {
		if a.Loom.Tool != "fetch" || a.Loom.Detail != one || !strings.Contains(a.Message, one) {
			t.Errorf("approval %+v, want the URL %s", a, one)
		}
		return map[string]any{"title": approveAlways}
	}
	if c := turn(0); c.Status != "succeeded" || an.count() != 1 || hits.Load() != 1 {
		t.Fatalf("turn 0: fetch %s, asked %d, hits %d", c.Status, an.count(), hits.Load())
	}
	e.await("host rule notice", hasMethod("loom/notice", "fetches from localhost without asking"))

	an.choose = func(approvalAsked) any {
		t.Error("asked for an allowed host")
		return map[string]any{"title": approveDeny}
	}
	if c := turn(1); c.Status != "succeeded" || an.count() != 1 || hits.Load() != 2 {
		t.Fatalf("turn 1: fetch %s, asked %d, hits %d: want it unasked", c.Status, an.count(), hits.Load())
	}

	an.choose = func(approvalAsked) any { return map[string]any{"title": approveDeny} }
	if c := turn(2); c.Status != "failed" || an.count() != 2 || hits.Load() != 2 {
		t.Fatalf("turn 2: fetch %s, asked %d, hits %d: want asked and denied", c.Status, an.count(), hits.Load())
	}

	// The host is the user's rule: listed, refused when malformed, and
	// taken back with loom.removeRule, after which it is asked again.
	var listed RulesResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdRules, FolderArgs{}, &listed); err != nil || !slices.Equal(listed.AllowFetchHosts, []string{"localhost"}) {
		t.Fatalf("loom.rules = %+v, %v; want allowFetchHosts [localhost]", listed, err)
	}
	for _, bad := range []RuleArgs{{FetchHost: "a/b"}, {FetchHost: "host:80"}, {FetchHost: "x.org", MCPServer: "ev"}, {FetchHost: "x.org", Exact: "ls"}} {
		if err := e.ed.ExecuteCommand(e.ctx, CmdAddRule, bad, nil); err == nil {
			t.Errorf("loom.addRule %+v accepted", bad)
		}
	}
	var res RulesResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdAddRule, RuleArgs{FetchHost: "Example.ORG"}, &res); err != nil || !slices.Equal(res.AllowFetchHosts, []string{"localhost", "example.org"}) {
		t.Errorf("loom.addRule {fetchHost: Example.ORG} = %+v, %v", res, err)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdRemoveRule, RuleArgs{FetchHost: "localhost"}, &res); err != nil || !slices.Equal(res.AllowFetchHosts, []string{"example.org"}) {
		t.Fatalf("loom.removeRule {fetchHost: localhost} = %+v, %v", res, err)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdRemoveRule, RuleArgs{FetchHost: "localhost"}, nil); err == nil {
		t.Error("removing a rule that is not there succeeded")
	}
	an.choose = func(approvalAsked) any { return map[string]any{"title": approveDeny} }
	if c := turn(3); c.Status != "failed" || an.count() != 3 || hits.Load() != 2 {
		t.Fatalf("after removing the rule: fetch %s, asked %d, hits %d: want asked again and denied", c.Status, an.count(), hits.Load())
	}
}

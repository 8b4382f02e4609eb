package acp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
)

// fetchScript is a model that, for the prompt "fetch N.", fetches
// urls[N], then says "done N".
func fetchScript(urls ...string) string {
	var b strings.Builder
	for i, u := range urls {
		fmt.Fprintf(&b, "[[step]]\nmatch.last_user_contains = %q\nmatch.last_role = \"user\"\n  [[step.tool_call]]\n  name = \"fetch\"\n  arguments = '{\"url\":%q}'\n\n", fmt.Sprintf("fetch %d.", i), u)
		fmt.Fprintf(&b, "[[step]]\nmatch.last_user_contains = %q\nmatch.last_role = \"tool\"\ntext = [%q]\n\n", fmt.Sprintf("fetch %d.", i), fmt.Sprintf("done %d", i))
	}
	return b.String()
}

// TestFetchOverACP: under tools.fetch = "ask" the client is asked with a
// fetch tool call (kind fetch, the URL in its title) and offered "Always
// allow fetches from <host> in this folder" instead of the session-wide
// "always"; picking it saves the host for the folder, so the next fetch
// from it runs unasked (in a new session too), while another host is
// asked again and a rejection leaves its server unreached.
func TestFetchOverACP(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "page "+r.URL.Path)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	one, two := "http://localhost:"+u.Port()+"/one", "http://localhost:"+u.Port()+"/two"
	other := "http://127.0.0.1:" + u.Port() + "/three"

	dir := repo(t, map[string]string{"a.txt": "a\n"})
	h := start(t, writeScript(t, fetchScript(one, two, other)), t.TempDir(), func(c *config.Config) {
		c.Tools.Fetch = config.PolicyAsk
		c.Tools.FetchPrivate = []string{"localhost", "127.0.0.1"}
	})
	h.initialize(true, true)
	id := h.newSession(dir)

	var asked []acpsdk.RequestPermissionRequest
	h.client.permit = func(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		asked = append(asked, p)
		return permitWith(optionHost)(context.Background(), p)
	}
	h.mustPrompt(id, "fetch 0.", acpsdk.StopReasonEndTurn)
	if len(asked) != 1 || hits.Load() != 1 {
		t.Fatalf("fetch 0: asked %d times, server hit %d times; want 1 and 1", len(asked), hits.Load())
	}
	p := asked[0]
	if p.ToolCall.Kind == nil || *p.ToolCall.Kind != acpsdk.ToolKindFetch || p.ToolCall.Title == nil || *p.ToolCall.Title != "Fetch "+one {
		t.Errorf("the request's tool call: kind %v title %v; want fetch, %q", p.ToolCall.Kind, p.ToolCall.Title, "Fetch "+one)
	}
	var names []string
	for _, o := range p.Options {
		names = append(names, string(o.OptionId)+"="+o.Name)
	}
	got := strings.Join(names, "\n")
	if !strings.Contains(got, "allow_host=Always allow fetches from localhost in this folder") || strings.Contains(got, optionAllowAlways) {
		t.Errorf("options:\n%s\nwant the host's folder rule and no session-wide allow", got)
	}

	h.client.permit = func(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		asked = append(asked, p)
		return permitWith(optionRejectOnce)(context.Background(), p)
	}
	id2 := h.newSession(dir)
	h.mustPrompt(id2, "fetch 1.", acpsdk.StopReasonEndTurn)
	if len(asked) != 1 || hits.Load() != 2 {
		t.Fatalf("fetch 1 from the allowed host: asked %d times (want 1), server hit %d times (want 2)", len(asked), hits.Load())
	}
	h.mustPrompt(id2, "fetch 2.", acpsdk.StopReasonEndTurn)
	if len(asked) != 2 || hits.Load() != 2 {
		t.Fatalf("fetch 2 from another host: asked %d times (want 2), server hit %d times (want 2: rejected)", len(asked), hits.Load())
	}
}

package mcp

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/elicit"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// A go-sdk server asks mid-call (elicitation/create), over stdio (a real
// process) and streamable HTTP: the call's asker gets the form read from
// the schema (required first, titles, enum titles, defaults, required, the
// password marked secret) and what it returns reaches the server; an
// error is "cancel"; no asker declines. URL mode: the URL reaches the
// asker, and the server's completion notification arrives as the call's
// progress. server-everything's form is asked too.
func TestElicitation(t *testing.T) {
	m := newManager(t, Spec{Name: "asking", URL: mcptest.AskHTTP(t)},
		Spec{Name: "askio", Command: mcptest.AskStdio(t)}, everything(t, "ev"))
	waitUntil(t, m, "the three servers", func() bool {
		return toolByName(m, "asking__deploy") != nil && toolByName(m, "askio__deploy") != nil && toolByName(m, "ev__trigger-elicitation-request") != nil
	})
	for _, server := range []string{"asking", "askio"} {
		var mu sync.Mutex
		var askedList []elicit.Request
		// taken reads what was asked, under mu: the asker runs on the
		// SDK's goroutines, ordered with the test only by the network.
		taken := func() []elicit.Request {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(askedList)
		}
		answer := func(res elicit.Result, err error) func(context.Context, elicit.Request) (elicit.Result, error) {
			return func(_ context.Context, r elicit.Request) (elicit.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				askedList = append(askedList, r)
				return res, err
			}
		}
		for _, c := range []struct {
			name string
			ask  func(context.Context, elicit.Request) (elicit.Result, error)
			want string
		}{
			{"accepted", answer(elicit.Result{Action: "accept", Content: map[string]any{"env": "prod", "replicas": int64(3), "api_token": "s3cret-value", "notify": false}}, nil),
				`action=accept content={api_token="len12" env="prod" notify=false replicas=3}`},
			{"declined", answer(elicit.Result{Action: "decline"}, nil), "action=decline"},
			{"no answer", answer(elicit.Result{}, errors.New("timeout")), "action=cancel"},
			{"no one to ask", nil, "action=decline"},
		} {
			mu.Lock()
			askedList = nil
			mu.Unlock()
			res := run(t, toolByName(m, server+"__deploy"), &tools.Env{Elicit: c.ask}, `{}`)
			asked := taken()
			if !strings.Contains(res.Text, c.want) {
				t.Errorf("%s %s: %q, want %q", server, c.name, res.Text, c.want)
			}
			if c.ask == nil {
				continue
			}
			if len(asked) != 1 {
				t.Fatalf("%s %s: asked %d times", server, c.name, len(asked))
			}
			r := asked[0]
			var names []string
			for _, f := range r.Fields {
				names = append(names, f.Name)
			}
			if r.Server != server || r.Mode != "form" || r.Message != "Deploy where, and with which token?" || strings.Join(names, ",") != "env,api_token,note,notify,replicas" {
				t.Fatalf("%s %s: asked %+v", server, c.name, r)
			}
			env, tok, reps := r.Fields[0], r.Fields[1], r.Fields[4]
			if env.Title != "Environment" || !env.Required || strings.Join(env.EnumTitles, ",") != "Production,Staging" ||
				reps.Type != "integer" || reps.Default != "2" || !reps.HasDefault || *reps.Maximum != 10 || !tok.Secret || !tok.Required {
				t.Errorf("%s: fields %+v", server, r.Fields)
			}
		}
		// URL mode: the URL is asked; the completion is the call's progress.
		var progress []string
		res := run(t, toolByName(m, server+"__connect"), &tools.Env{
			Elicit: answer(elicit.Result{Action: "accept"}, nil),
			Progress: func(msg string) {
				progress = append(progress, msg)
			},
		}, `{}`)
		asked := taken()
		if !strings.Contains(res.Text, "action=accept") || asked[len(asked)-1].URL != "https://example.com/connect?id=e1" || asked[len(asked)-1].Mode != "url" {
			t.Errorf("%s connect: %q, asked %+v", server, res.Text, asked[len(asked)-1])
		}
		// The notification may arrive before or after the call's result:
		// as the call's progress, else as a report.
		want := server + ": the step at https://example.com/connect?id=e1 is complete"
		var reports []Report
		waitUntil(t, m, "the completion of "+server+"'s URL", func() bool {
			reports = append(reports, m.TakeReports()...)
			return len(progress) == 1 || len(reports) > 0
		})
		if len(progress) == 1 && progress[0] != want || len(reports) > 0 && (reports[0].Text != "MCP server "+want || !reports[0].Info) {
			t.Errorf("%s connect: progress %q, reports %+v; want %q", server, progress, reports, want)
		}
	}
	var mu sync.Mutex
	var got []elicit.Request
	res := run(t, toolByName(m, "ev__trigger-elicitation-request"), &tools.Env{Elicit: func(_ context.Context, r elicit.Request) (elicit.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
		return elicit.Result{Action: "decline"}, nil
	}}, `{}`)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || len(got[0].Fields) == 0 || !strings.Contains(strings.ToLower(res.Text), "declined") {
		t.Errorf("server-everything's form: asked %+v, result %q", got, res.Text)
	}
}

package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/elicit"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// A question that waits for a slow typist longer than the call's timeout
// does not time the call out: the timeout stops while the question waits
// (go-sdk asking servers, over stdio, a real process, and streamable
// HTTP). The typist here answers after the whole timeout has passed.
func TestSlowAnswerKeepsTheCall(t *testing.T) {
	const timeout = 5 * time.Second // generous: the server's own part must fit in it under load
	m := newManager(t, Spec{Name: "asking", URL: mcptest.AskHTTP(t), Timeout: timeout},
		Spec{Name: "askio", Command: mcptest.AskStdio(t), Timeout: timeout})
	waitUntil(t, m, "the two servers", func() bool {
		return toolByName(m, "asking__deploy") != nil && toolByName(m, "askio__deploy") != nil
	})
	for _, server := range []string{"asking", "askio"} {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			slow := func(ctx context.Context, _ elicit.Request) (elicit.Result, error) {
				select { // the user types for longer than the call's timeout
				case <-time.After(timeout + 1500*time.Millisecond):
				case <-ctx.Done():
					return elicit.Result{}, ctx.Err()
				}
				return elicit.Result{Action: "accept", Content: map[string]any{"env": "prod", "api_token": "s3cret-value"}}, nil
			}
			start := time.Now()
			res := run(t, toolByName(m, server+"__deploy"), &tools.Env{Elicit: slow}, `{}`)
			if res.IsError || !strings.Contains(res.Text, `action=accept content={api_token="len12" env="prod"`) {
				t.Errorf("%s: after a slow answer: %q, want the server's result", server, res.Text)
			}
			if took := time.Since(start); took < timeout {
				t.Errorf("%s: took %v, less than the typist", server, took)
			}
		})
	}
}

// The clock: paused, it does not fire; resumed, it fires after what was
// left; a call never paused fires at its timeout.
func TestCallClock(t *testing.T) {
	ctx, c, stop := startCallClock(context.Background(), 50*time.Millisecond)
	defer stop()
	c.pause()
	c.pause() // two questions at once
	c.resume()
	select {
	case <-ctx.Done():
		t.Fatal("fired while a question waits")
	case <-time.After(200 * time.Millisecond):
	}
	c.resume()
	select {
	case <-ctx.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("never fired once the questions were answered")
	}
	if !timedOut(ctx) || c.waited() < 200*time.Millisecond {
		t.Errorf("timedOut %v, waited %v", timedOut(ctx), c.waited())
	}
	ctx2, _, stop2 := startCallClock(context.Background(), time.Hour)
	stop2()
	if timedOut(ctx2) {
		t.Error("a stopped clock counts as a timeout")
	}
}

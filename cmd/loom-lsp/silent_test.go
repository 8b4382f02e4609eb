package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// silentServer is a real HTTP server that accepts every request and never
// answers it (no status, no headers, no byte), until the client gives up.
// It counts the chat completion requests it received.
func silentServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var requests atomic.Int32
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			requests.Add(1) // not the session's question about the context window
		}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv, &requests
}

// silentConfig points the model at url with a short first-byte timeout and
// an idle timeout of an hour, so that only the first-byte timeout can end
// a request; two fast retries.
func silentConfig(t *testing.T, url, firstByte string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "loom.toml", fmt.Sprintf(`[model]
base_url = %q
name = "silent-model"
first_byte_timeout = %q
idle_timeout = "1h"

[agent]
max_retries = 2
retry_base = "100ms"
retry_max = "200ms"
`, url+"/v1", firstByte))
}

// A server that accepts the connection and never answers fails the turn
// after max_retries+1 first-byte timeouts (not idle timeouts), each retry
// announced, with exit code 4 and an error of kind "idle".
func TestExecAgainstASilentServerGivesUp(t *testing.T) {
	srv, requests := silentServer(t)
	r := runLoom(t, testRepo(t), "", "exec", "--output", "jsonl", "--config", silentConfig(t, srv.URL, "1s"), "hi")
	if r.code != 4 {
		t.Fatalf("exit %d, want 4 (the model failed)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	events := validEvents(t, eventSchema(t), r.stdout)
	retries := ofType(events, "retry_scheduled")
	if len(retries) != 2 {
		t.Errorf("%d retry_scheduled events, want 2:\n%s", len(retries), r.stdout)
	}
	for _, ev := range retries {
		if reason, _ := ev["reason"].(string); !strings.Contains(reason, "did not answer within 1s (first_byte_timeout)") {
			t.Errorf("retry reason %q does not name the first-byte timeout", reason)
		}
		if ev["kind"] != "idle" {
			t.Errorf("retry kind %v; want idle, like the error's", ev["kind"])
		}
	}
	errs := ofType(events, "error")
	if len(errs) != 1 || errs[0]["kind"] != "idle" || !strings.Contains(errs[0]["message"].(string), "after 2 retries") {
		t.Errorf("want one idle error after 2 retries, got %v", errs)
	}
	if n := requests.Load(); n != 3 {
		t.Errorf("the server received %d requests, want 3 (1 + max_retries)", n)
	}
}

// On a terminal, the wait for a silent server is never silent: stderr
// counts the seconds waited for the model and says when a retry is
// scheduled.
func TestExecOnATerminalShowsTheWaitForASilentServer(t *testing.T) {
	srv, _ := silentServer(t)
	out, code := ttyRun(t, testRepo(t), isolatedEnv(t), nil, "exec", "--config", silentConfig(t, srv.URL, "2500ms"), "hi")
	if code != 4 {
		t.Fatalf("exit %d, want 4:\n%q", code, out)
	}
	// The seconds shown are whichever the load lets the line refresh at.
	if !modelWait.MatchString(out) {
		t.Errorf("the terminal did not count the seconds waited for the model:\n%q", out)
	}
	for _, want := range []string{"retrying in 100ms", "did not answer within 2.5s (first_byte_timeout)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal did not show %q:\n%q", want, out)
		}
	}
}

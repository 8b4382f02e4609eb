package workspace

import (
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// The retry notice says the reason and the delay once each: the issue's
// "retrying in 2s (rate_limited, HTTP 429: rate limited by the provider
// (HTTP 429): … retry in 2s)" is one clean sentence.
func TestRetryWordsSayEachThingOnce(t *testing.T) {
	m := fsm.New(fsm.Config{MaxRetries: 3, RetryBase: time.Second, RetryMax: time.Minute})
	if _, err := m.Step(fsm.UserInput{Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	acts, err := m.Step(fsm.LlmError{Request: 1, Kind: fsm.ErrorRateLimited, Retryable: true, StatusCode: 429, RetryAfter: 2 * time.Second,
		Message: "rate limited by the provider (HTTP 429): Rate limit reached for requests; retry in 2s"})
	if err != nil {
		t.Fatal(err)
	}
	var retry *fsm.ScheduleRetry
	for _, a := range acts {
		if r, ok := a.(fsm.ScheduleRetry); ok {
			retry = &r
		}
	}
	if retry == nil {
		t.Fatalf("no retry scheduled: %v", acts)
	}
	got := RetryWords(retry.Delay, retry.Reason)
	want := "retrying in 2s (rate limited by the provider (HTTP 429): Rate limit reached for requests)"
	if got != want {
		t.Errorf("RetryWords = %q\nwant        %q", got, want)
	}
}

package workspace

import (
	"testing"
	"time"
)

// TestRetryWordsSayEachThingOnce: the delay is said once (not again from
// the provider's own "; retry in 2s"), and the reason as the provider
// error said it.
func TestRetryWordsSayEachThingOnce(t *testing.T) {
	for _, c := range []struct {
		delay  time.Duration
		reason string
		want   string
	}{
		{2 * time.Second, "rate limited by the provider (HTTP 429): Rate limit reached for gpt-4o; retry in 2s",
			"retrying in 2s (rate limited by the provider (HTTP 429): Rate limit reached for gpt-4o)"},
		{1500 * time.Millisecond, "rate limited by the provider (HTTP 429); retry in 1.5s", "retrying in 1.5s (rate limited by the provider (HTTP 429))"},
		{time.Second, "the provider failed (HTTP 503)", "retrying in 1s (the provider failed (HTTP 503))"},
		{time.Second, "", "retrying in 1s"},
		{time.Second, "retry in 1s", "retrying in 1s"},
	} {
		if got := RetryWords(c.delay, c.reason); got != c.want {
			t.Errorf("RetryWords(%v, %q) = %q, want %q", c.delay, c.reason, got, c.want)
		}
	}
}

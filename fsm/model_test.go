package fsm

import "testing"

func TestCompactionStartedMessage(t *testing.T) {
	for _, c := range []struct {
		tokens, window int64
		want           string
	}{
		{1850, 2048, "compacting the conversation (1850 of 2048 tokens)"},
		{118_000, 128_000, "compacting the conversation (118k of 128k tokens)"},
	} {
		if got := (CompactionStarted{Tokens: c.tokens, Window: c.window}).Message(); got != c.want {
			t.Errorf("Message() = %q, want %q", got, c.want)
		}
	}
}

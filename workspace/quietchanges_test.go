package workspace

import (
	"slices"
	"testing"
	"time"
)

// TestOwnChangesHoldForSeveralEchoes: one rewrite by loom may reach the
// watcher as two batches; neither is news, while another file is, and
// once the expectation is over the same file is news again.
func TestOwnChangesHoldForSeveralEchoes(t *testing.T) {
	var o ownChanges
	o.expect([]string{"a.txt"})
	for i := 0; i < 2; i++ {
		if got := o.news([]string{"a.txt", "b.txt"}); !slices.Equal(got, []string{"b.txt"}) {
			t.Fatalf("echo %d: news %q, want b.txt only", i+1, got)
		}
	}
	o.paths["a.txt"] = time.Now().Add(-time.Millisecond)
	if got := o.news([]string{"a.txt"}); !slices.Equal(got, []string{"a.txt"}) {
		t.Fatalf("after the expectation: news %q", got)
	}
	o.expect([]string{"c.txt"})
	o.forget([]string{"c.txt"})
	if got := o.news([]string{"c.txt"}); !slices.Equal(got, []string{"c.txt"}) {
		t.Fatalf("a forgotten expectation still hides c.txt: %q", got)
	}
}

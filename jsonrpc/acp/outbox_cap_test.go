package acp

import (
	"fmt"
	"strings"
	"testing"
)

// Agent text merged for a client that does not read is capped, and the
// marker's count adds up over successive cuts.
func TestPendingAgentTextIsCapped(t *testing.T) {
	text := ""
	piece := strings.Repeat("x", 4095) + "\n"
	for i := 0; i < 2000; i++ { // 8 MB
		text = capPending(text + piece)
		if len(text) > MaxPendingText+200 {
			t.Fatalf("%d bytes wait (cap %d)", len(text), MaxPendingText)
		}
	}
	var kb int
	if n, _ := fmtSscan(text, &kb); n != 1 {
		t.Fatalf("no marker: %.80q", text)
	}
	kept := len(text) - strings.IndexByte(text, '\n') - 1
	if got, want := kb, (2000*len(piece)-kept+1023)/1024; got < want-2 || got > want+2 {
		t.Errorf("marker says %d KB dropped; want about %d", got, want)
	}
}

func fmtSscan(text string, kb *int) (int, error) { return fmt.Sscanf(text, pendingMarker, kb) }

package jsonrpc

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Text queued for a client that does not read is capped: the head is
// dropped, the tail kept whole (on a rune boundary), and the count of
// what was dropped adds up, for the marker.
func TestPendingTextIsCapped(t *testing.T) {
	var it outItem
	piece := strings.Repeat("é", 2000) + "\n" // 4,001 bytes, two-byte runes
	total := 0
	for i := 0; i < 5000; i++ { // ~20 MB
		it.text = append(it.text, piece...)
		it.capPending()
		total += len(piece)
		if len(it.text) > MaxPendingText {
			t.Fatalf("after %d bytes, %d bytes wait (cap %d)", total, len(it.text), MaxPendingText)
		}
	}
	if it.dropped+len(it.text) != total {
		t.Errorf("dropped %d + kept %d != streamed %d", it.dropped, len(it.text), total)
	}
	if !utf8.Valid(it.text) || !strings.HasSuffix(string(it.text), piece) {
		t.Error("the kept tail is not the stream's last bytes, whole runes")
	}
	if m := notShown(it.dropped); !strings.Contains(m, "KB not shown") {
		t.Errorf("marker %q", m)
	}
}

package secret

import (
	"strings"
	"testing"
)

func TestSealUnseal(t *testing.T) {
	r := NewRedactor(nil)
	r.Add("sk-live-0123456789abcdef")
	text := `key := "sk-live-0123456789abcdef" // Bearer abc.DEF-123_x`
	sealed := r.Seal(text)
	if sealed == text || contains(sealed, "sk-live-0123456789abcdef") || !contains(sealed, "Bearer abc.DEF-123_x") {
		t.Fatalf("sealed %q: want the key sealed, the rest exact", sealed)
	}
	if got := r.Unseal(sealed); got != text {
		t.Fatalf("unsealed %q, want %q", got, text)
	}
	other := NewRedactor(nil)
	other.Add("sk-other-0123456789")
	if got := other.Unseal(sealed); got != `key := "`+Mask+`" // Bearer abc.DEF-123_x` {
		t.Fatalf("a key no longer known: %q", got)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

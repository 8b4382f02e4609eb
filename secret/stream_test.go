package secret

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// testKey is the configured secret of the stream tests.
const testKey = "sk-live-0123456789abcdefXYZ"

// streamTexts are texts that hold the key or a bearer token, each to be
// cut into pieces at every position.
var streamTexts = []string{
	"the key is " + testKey + ", do not share it",
	testKey,
	"401: Incorrect API key provided: " + testKey + " (header \"Bearer " + testKey + "\")",
	"curl -H 'Authorization: Bearer abc.DEF-123_x/y+z==' https://example.com",
	"Authorization: bearer%20tok3n-long-enough and more",
	"two keys " + testKey + testKey + " and sk-live-0 (a beginning only)",
	"ends with a beginning: sk-live-01234",
	"Bearer\n\t token-after-white-space",
	"AbBearer notatoken; xbearer no; bearer",
	"a token at the very end: Bearer zzzzzzzz",
	// The token of a scheme is a second "bearer" and a space: the tail
	// that looks like a new scheme is the first token's end (FuzzStream).
	"BeArer BeArer ",
}

// join runs pieces through a new Stream of r and returns what it shows,
// each Write's result checked for the key on its own too.
func join(t *testing.T, r *Redactor, pieces []string) string {
	t.Helper()
	st := r.Stream()
	var out strings.Builder
	for _, p := range pieces {
		shown := st.Write(p)
		if strings.Contains(shown, testKey) {
			t.Errorf("Write(%q) shows the key: %q", p, shown)
		}
		out.WriteString(shown)
	}
	out.WriteString(st.Flush())
	if st.Holding() {
		t.Error("Flush left text held")
	}
	return out.String()
}

// Every text cut in two and in three at every possible byte position
// comes out of the Stream exactly as Redactor.String masks it whole: no
// key and no token, whatever the cut, and nothing else changed or lost.
func TestStreamEverySplit(t *testing.T) {
	r := NewRedactor(nil)
	r.Add(testKey)
	for _, text := range streamTexts {
		want := r.String(text)
		if strings.Contains(want, testKey) || strings.Contains(want, "tok3n") || strings.Contains(want, "zzzz") {
			t.Fatalf("String(%q) = %q still shows a secret", text, want)
		}
		for i := 0; i <= len(text); i++ {
			if got := join(t, r, []string{text[:i], text[i:]}); got != want {
				t.Errorf("cut at %d of %q:\n got %q\nwant %q", i, text, got, want)
			}
			for j := i; j <= len(text); j++ {
				if got := join(t, r, []string{text[:i], text[i:j], text[j:]}); got != want {
					t.Errorf("cut at %d and %d of %q:\n got %q\nwant %q", i, j, text, got, want)
				}
			}
		}
	}
}

// A text fed one byte at a time: the worst split of all.
func TestStreamByteByByte(t *testing.T) {
	r := NewRedactor(NewRedactor(nil))
	r.parent.Add(testKey)
	for _, text := range streamTexts {
		pieces := strings.Split(text, "")
		if got, want := join(t, r, pieces), r.String(text); got != want {
			t.Errorf("byte by byte %q:\n got %q\nwant %q", text, got, want)
		}
	}
}

// Text that is no secret streams through at once: nothing held back
// unless its end could begin one, and then only that end.
func TestStreamHoldsOnlyAPossibleBeginning(t *testing.T) {
	r := NewRedactor(nil)
	r.Add(testKey)
	cases := []struct{ piece, shown string }{
		{"Hello, world.", "Hello, world."},
		{"the key sk-li", "the key "}, // the beginning of the key
		{"the word s", "the word "},   // its first byte
		{"Authorization: Bea", "Authorization: "},
		{"Authorization: Bearer ", "Authorization: "},
		{"Authorization: Bearer tok", "Authorization: "}, // the token may go on
		{"Authorization: Bearer tok, more", "Authorization: Bearer [REDACTED], more"},
		{"abbe", "abbe"}, // no word boundary before the b
		{"skill", "skill"},
	}
	for _, c := range cases {
		st := r.Stream()
		if got := st.Write(c.piece); got != c.shown {
			t.Errorf("Write(%q) = %q, want %q", c.piece, got, c.shown)
		}
		if got := c.shown + st.Flush(); got != r.String(c.piece) {
			t.Errorf("Write(%q) then Flush = %q, want %q", c.piece, got, r.String(c.piece))
		}
	}
}

// A bearer token longer than a Stream holds is masked without waiting
// for its end, and what follows of it is dropped.
func TestStreamLongToken(t *testing.T) {
	st := (&Redactor{}).Stream()
	long := strings.Repeat("t", maxHeldToken+10)
	got := st.Write("Bearer "+long) + st.Write("tttt==") + st.Write("= after") + st.Flush()
	if got != "Bearer [REDACTED] after" {
		t.Errorf("got %q", got)
	}
}

// A key added while a text streams applies from the next Write.
func TestStreamSeesValuesAddedLater(t *testing.T) {
	r := NewRedactor(nil)
	st := r.Stream()
	first := st.Write("one ")
	r.Add(testKey)
	got := first + st.Write(testKey[:5]) + st.Write(testKey[5:]+" two") + st.Flush()
	if got != "one [REDACTED] two" {
		t.Errorf("got %q", got)
	}
}

// The nil Redactor's Stream passes the text through.
func TestNilRedactorStream(t *testing.T) {
	var r *Redactor
	st := r.Stream()
	if got := st.Write("Bearer abcdefgh") + st.Flush(); got != "Bearer abcdefgh" {
		t.Errorf("got %q", got)
	}
}

// bearerRE is the reference for the hand-written bearer matcher.
var bearerRE = regexp.MustCompile(`(?i)\bbearer(\s+|%20)[A-Za-z0-9\-._~+/]+=*`)

// The bearer matcher masks exactly what the regular expression matches,
// on random texts made of the pieces a token is made of.
func TestMaskBearersMatchesTheRegexp(t *testing.T) {
	atoms := []string{"bearer", "Bearer", "BEARER", "bEaReR", "x", "_", " ", "\t", "\n", "%20", "%2", "%", "=", "==", "tok", "-.~+/", "[", "]", "é", "b", "0"}
	rnd := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		for k := rnd.IntN(12); k >= 0; k-- {
			b.WriteString(atoms[rnd.IntN(len(atoms))])
		}
		s := b.String()
		want := bearerRE.ReplaceAllString(s, maskedBearer)
		if got, _ := maskBearers(s, false); got != want {
			t.Fatalf("maskBearers(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzStream: any text, with the key and tokens put in, cut anywhere,
// comes out of a Stream as Redactor.String masks it whole.
func FuzzStream(f *testing.F) {
	for _, s := range streamTexts {
		f.Add(s, uint16(3), uint16(7))
	}
	r := NewRedactor(nil)
	r.Add(testKey)
	f.Fuzz(func(t *testing.T, text string, i, j uint16) {
		a, b := int(i)%(len(text)+1), int(j)%(len(text)+1)
		a, b = min(a, b), max(a, b)
		want := r.String(text)
		if got := join(t, r, []string{text[:a], text[a:b], text[b:]}); got != want {
			t.Errorf("cut at %d and %d of %q:\n got %q\nwant %q", a, b, text, got, want)
		}
	})
}

// BenchmarkMaskBearersManyLowercaseB masks 4 MB of prose full of b's and
// without a B: linear in its size (it was quadratic: 44 s for one 4 MB
// answer in the journal).
func BenchmarkMaskBearersManyLowercaseB(b *testing.B) {
	text := strings.Repeat("All work and no play makes Jack a dull boy. ", 4<<20/44)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if out, _ := maskBearers(text, false); len(out) != len(text) {
			b.Fatal("masked something")
		}
	}
}

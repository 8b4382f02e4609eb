package secret

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Redactor masks secret values, and bearer tokens, in text. Its methods
// are safe for concurrent use. The zero value masks bearer tokens only;
// a nil *Redactor masks nothing.
type Redactor struct {
	addMu  sync.Mutex               // serialises Add
	own    atomic.Pointer[[]string] // this redactor's values, longest first; replaced, never changed
	parent *Redactor
	// merged caches own and the parent's values together (see values).
	merged atomic.Pointer[mergedValues]
}

// mergedValues is the union of a redactor's values and its parent's, for
// the slices it was made from.
type mergedValues struct {
	own, parent, all *[]string
}

// Default holds the values of the variables taken by Take.
var Default = &Redactor{}

// NewRedactor returns a Redactor that masks its own values and those of
// parent (nil for none).
func NewRedactor(parent *Redactor) *Redactor { return &Redactor{parent: parent} }

// Add makes r mask value, and its JSON-escaped form. Values shorter than
// 6 bytes are not masked.
func (r *Redactor) Add(value string) {
	if len(value) < minSecretLen {
		return
	}
	forms := []string{value}
	if b, err := json.Marshal(value); err == nil {
		if esc := string(b[1 : len(b)-1]); esc != value {
			forms = append(forms, esc)
		}
	}
	r.addMu.Lock()
	defer r.addMu.Unlock()
	var values []string
	if old := r.own.Load(); old != nil {
		values = slices.Clone(*old)
	}
	added := false
	for _, f := range forms {
		if !slices.Contains(values, f) {
			values, added = append(values, f), true
		}
	}
	if added {
		sortLongestFirst(values)
		r.own.Store(&values)
	}
}

// sortLongestFirst orders values so that a secret containing another is
// masked whole.
func sortLongestFirst(values []string) {
	slices.SortStableFunc(values, func(a, b string) int { return len(b) - len(a) })
}

// values returns every value r masks, its parent's included, longest
// first; nil when there is none. It allocates only when a value was added
// since the last call.
func (r *Redactor) values() *[]string {
	if r == nil {
		return nil
	}
	own := r.own.Load()
	var parent *[]string
	if r.parent != nil {
		parent = r.parent.values()
	}
	switch {
	case parent == nil:
		return own
	case own == nil:
		return parent
	}
	if m := r.merged.Load(); m != nil && m.own == own && m.parent == parent {
		return m.all
	}
	all := append(slices.Clone(*own), *parent...)
	sortLongestFirst(all)
	all = slices.Compact(all)
	r.merged.Store(&mergedValues{own: own, parent: parent, all: &all})
	return &all
}

// String returns s with every secret masked; s itself, with no copy,
// when it holds none.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	s = maskValues(s, r.values())
	s, _ = maskBearers(s, false)
	return s
}

// Bytes returns b with every secret masked; b itself when there is none.
func (r *Redactor) Bytes(b []byte) []byte {
	s := string(b)
	if out := r.String(s); out != s {
		return []byte(out)
	}
	return b
}

// Writer returns an io.Writer that masks secrets in each Write before
// passing it to w. Each Write must hold whole lines (a log record), so
// that no secret is split between two writes.
func (r *Redactor) Writer(w io.Writer) io.Writer { return redactWriter{r, w} }

type redactWriter struct {
	r *Redactor
	w io.Writer
}

func (rw redactWriter) Write(p []byte) (int, error) {
	if _, err := rw.w.Write(rw.r.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// maskValues replaces every occurrence of values (longest first) in s.
func maskValues(s string, values *[]string) string {
	if values == nil {
		return s
	}
	for _, v := range *values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Mask)
		}
	}
	return s
}

// A bearer token is what the regular expression
//
//	\b[Bb][Ee][Aa][Rr][Ee][Rr](\s+|%20)[A-Za-z0-9\-._~+/]+=*
//
// matches (RFC 6750's b64token after the scheme, also URL-encoded). It is
// matched by hand: the scan costs one pass over the bytes and allocates
// nothing when there is no token, and it tells a streaming caller where a
// token may still be going on.

// bearerScheme is the scheme name of a bearer token, in lower case.
const bearerScheme = "bearer"

// maskedBearer replaces a whole bearer token.
const maskedBearer = "Bearer " + Mask

// isWordByte reports whether c is a byte of a word for \b.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// isTokenByte reports whether c may be in a bearer token (before its
// '=' padding).
func isTokenByte(c byte) bool {
	switch c {
	case '-', '.', '_', '~', '+', '/':
		return true
	}
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// isSpace reports whether c is white space for \s.
func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\f', '\r':
		return true
	}
	return false
}

// lower returns c in lower case, for ASCII letters.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// schemePrefix returns how many bytes of s, from its start, spell the
// beginning of "bearer" in any case (at most 6).
func schemePrefix(s string) int {
	n := 0
	for n < len(bearerScheme) && n < len(s) && lower(s[n]) == bearerScheme[n] {
		n++
	}
	return n
}

// boundaryAt reports whether a word starts at s[i]; prevWord says whether
// the byte before s (not in s) is a word byte.
func boundaryAt(s string, i int, prevWord bool) bool {
	if i == 0 {
		return !prevWord
	}
	return !isWordByte(s[i-1])
}

// tokenEnd is the state of a bearer token that reaches the end of a text.
type tokenEnd int

const (
	tokenClosed  tokenEnd = iota // the text does not end inside a token
	tokenOpen                    // it ends in the token's characters: more may follow
	tokenPadding                 // it ends in its '=' padding: more '=' may follow
)

// bearerAt matches a bearer token at s[i] (the word boundary is the
// caller's check) and returns its end and whether it reaches the end of
// s, and how.
func bearerAt(s string, i int) (end int, ok bool, open tokenEnd) {
	j := i + len(bearerScheme)
	if j > len(s) || schemePrefix(s[i:]) < len(bearerScheme) {
		return 0, false, tokenClosed
	}
	k := j
	for k < len(s) && isSpace(s[k]) {
		k++
	}
	if k == j {
		if !strings.HasPrefix(s[j:], "%20") {
			return 0, false, tokenClosed
		}
		k += 3
	}
	t := k
	for t < len(s) && isTokenByte(s[t]) {
		t++
	}
	if t == k {
		return 0, false, tokenClosed
	}
	open = tokenOpen
	for t < len(s) && s[t] == '=' {
		t, open = t+1, tokenPadding
	}
	if t < len(s) {
		open = tokenClosed
	}
	return t, true, open
}

// nextBearer returns the first bearer token of s at or after from: where
// it starts and ends, and whether it reaches the end of s, and how;
// prevWord says whether the byte before s is a word byte.
func nextBearer(s string, from int, prevWord bool) (start, end int, open tokenEnd, ok bool) {
	for i := from; i+len(bearerScheme) <= len(s); i++ {
		// Skip to the next b or B. (Two IndexByte calls were quadratic:
		// a text with many b's and no B scanned to its end for the B at
		// each b.)
		j := strings.IndexAny(s[i:], "bB")
		if j < 0 {
			break
		}
		if i += j; i+len(bearerScheme) > len(s) || !boundaryAt(s, i, prevWord) {
			continue
		}
		if end, ok, open := bearerAt(s, i); ok {
			return i, end, open, true
		}
	}
	return 0, 0, tokenClosed, false
}

// maskBearers replaces every bearer token of s with maskedBearer; prevWord
// says whether the byte before s is a word byte. It returns s itself when
// there is none, and how the last token ends when it reaches the end of s.
func maskBearers(s string, prevWord bool) (string, tokenEnd) {
	start, end, open, ok := nextBearer(s, 0, prevWord)
	if !ok {
		return s, tokenClosed
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for ok {
		b.WriteString(s[last:start])
		b.WriteString(maskedBearer)
		last = end
		var next tokenEnd
		start, end, next, ok = nextBearer(s, end, prevWord)
		if ok {
			open = next
		}
	}
	b.WriteString(s[last:])
	return b.String(), open
}

// openBearer returns where the bearer token that contains s[cut] or
// reaches the end of s starts, or cut when there is none: a token that
// a cut there would split.
func openBearer(s string, cut int, prevWord bool) int {
	for i := 0; ; {
		start, end, _, ok := nextBearer(s, i, prevWord)
		if !ok || start >= cut {
			return cut
		}
		if end > cut || end == len(s) {
			return start
		}
		i = end
	}
}

// bearerTail returns where the beginning of a bearer token that s ends
// with starts ("Bea", "bearer", "Bearer  ", "bearer%2"): a token that the
// next piece of text may complete. It is len(s) when there is none.
func bearerTail(s string, prevWord bool) int {
	k := len(s)
	for k > 0 && isSpace(s[k-1]) {
		k--
	}
	if k < len(s) { // the scheme, then white space
		if i := k - len(bearerScheme); i >= 0 && schemePrefix(s[i:k]) == len(bearerScheme) && boundaryAt(s, i, prevWord) {
			return i
		}
		return len(s)
	}
	// The scheme or its beginning, or the scheme and the beginning of
	// "%20", ends s.
	for _, sep := range []string{"%20", "%2", "%"} {
		if strings.HasSuffix(s, sep) {
			if i := len(s) - len(sep) - len(bearerScheme); i >= 0 && schemePrefix(s[i:len(s)-len(sep)]) == len(bearerScheme) && boundaryAt(s, i, prevWord) {
				return i
			}
			return len(s)
		}
	}
	for n := min(len(bearerScheme), len(s)); n > 0; n-- {
		i := len(s) - n
		if schemePrefix(s[i:]) == n && boundaryAt(s, i, prevWord) {
			return i
		}
	}
	return len(s)
}

// valueTail returns where the beginning of a secret value that s ends
// with starts (a proper prefix of one of values, the longest such), or
// len(s) when there is none.
func valueTail(s string, values *[]string) int {
	from := len(s)
	if values == nil {
		return from
	}
	for _, v := range *values {
		start := max(0, len(s)-(len(v)-1))
		for i := start; i < from; i++ {
			j := strings.IndexByte(s[i:from], v[0])
			if j < 0 {
				break
			}
			i += j
			if strings.HasPrefix(v, s[i:]) {
				from = i
				break
			}
		}
	}
	return from
}

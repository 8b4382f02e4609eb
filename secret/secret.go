// Package secret keeps API keys where they belong: out of the process's
// environment, where a tool's process could read them through
// /proc/$PPID/environ, and out of every text that leaves the process or
// is written to disk.
//
// [Take] moves an environment variable into memory: the variable is unset
// and its bytes in the process's original environment block (what
// /proc/PID/environ shows) are overwritten. [Getenv] reads a variable
// through that memory, taking it on first use, so that configuration
// reloads still find the key. [Redactor] replaces known secret values and
// "Bearer …" tokens with [Mask].
package secret

import (
	"encoding/json"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Mask replaces a secret in redacted text.
const Mask = "[REDACTED]"

// minSecretLen is the shortest value redacted: masking every "a" of a
// text for a one-letter key would destroy the text and reveal the key.
const minSecretLen = 6

// taken holds the variables moved out of the environment by Take.
var taken struct {
	sync.Mutex
	values map[string]string
}

// Take moves the environment variable name into memory (see the package
// doc) and adds its value to [Default]. It reports whether the variable
// was set, now or by an earlier Take (a variable set again since is taken
// again, with its new value).
func Take(name string) bool {
	taken.Lock()
	defer taken.Unlock()
	v, ok := os.LookupEnv(name)
	if !ok || name == "" {
		_, had := taken.values[name]
		return had
	}
	// The runtime's copy of the environment may share its bytes with the
	// block scrubbed below: keep a copy of our own first.
	v = strings.Clone(v)
	if taken.values == nil {
		taken.values = map[string]string{}
	}
	taken.values[name] = v
	Default.Add(v)
	os.Unsetenv(name)
	scrubEnvBlock(name)
	return true
}

// Getenv returns the value of the environment variable name: kept in
// memory by Take, or else taken from the environment now. It is "" when
// the variable is not set.
func Getenv(name string) string {
	if name == "" {
		return ""
	}
	Take(name)
	taken.Lock()
	defer taken.Unlock()
	return taken.values[name]
}

// Lookup returns the value of the environment variable name, kept in
// memory by Take or else still in the environment; unlike Getenv it does
// not take it (for PATH, HOME and other variables that are no secret).
func Lookup(name string) string {
	taken.Lock()
	v, ok := taken.values[name]
	taken.Unlock()
	if ok {
		return v
	}
	return os.Getenv(name)
}

// TakeKeys takes every variable of the environment that holds an API key
// by its name (NAME ending in _API_KEY, in any case) and those in names.
func TakeKeys(names ...string) {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(strings.ToUpper(name), "_API_KEY") {
			names = append(names, name)
		}
	}
	for _, n := range names {
		Take(n)
	}
}

// bearer matches an HTTP bearer token ("Bearer sk-…", any case).
var bearer = regexp.MustCompile(`(?i)\bbearer(\s+|%20)[A-Za-z0-9\-._~+/]+=*`)

// Redactor masks secret values, and bearer tokens, in text. Its methods
// are safe for concurrent use. The zero value masks bearer tokens only.
type Redactor struct {
	mu     sync.RWMutex
	values []string // longest first, so a secret containing another is masked whole
	parent *Redactor
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
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range forms {
		if !slices.Contains(r.values, f) {
			r.values = append(r.values, f)
		}
	}
	slices.SortFunc(r.values, func(a, b string) int { return len(b) - len(a) })
}

// String returns s with every secret masked.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	for _, v := range r.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Mask)
		}
	}
	r.mu.RUnlock()
	if r.parent != nil {
		s = r.parent.String(s)
	} else if bearer.MatchString(s) {
		s = bearer.ReplaceAllString(s, "Bearer "+Mask)
	}
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

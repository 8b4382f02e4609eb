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
// "Bearer …" tokens with [Mask] in whole texts; its [Stream] does it for a
// text that arrives in pieces (the model's streamed answer), where a
// secret may be cut between two pieces: it holds back only a tail that
// could be the beginning of one, until the next piece or the end.
package secret

import (
	"os"
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

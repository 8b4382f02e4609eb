package llm

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
)

// Discovery — what loom asks a server besides the model's answers: its
// models (/v1/models), the model's context window (/v1/models, llama.cpp's
// /props, Ollama's /api/show and /api/ps). None of it is ever on the path
// of a model request: the caller asks concurrently with the first request,
// or remembers the answers per server (see workspace's discovery cache).
// A path a server answered 404 is not asked again by this provider, and
// the caller may carry that knowledge across processes (ProbeMemory).

// ProbeMemory is a [Provider] that remembers which discovery paths its
// server does not serve.
type ProbeMemory interface {
	// MissingProbes returns the discovery paths the server answered 404
	// (or 405), sorted.
	MissingProbes() []string
	// SkipProbes takes paths known to be missing: they are not asked.
	SkipProbes(paths []string)
}

// errProbeMissing is wrapped by a probe's error when the server does not
// serve the path (404, 405), or the path is known to be missing.
var errProbeMissing = errors.New("not served")

// probeMemory is the set of discovery paths known to be missing.
type probeMemory struct {
	mu      sync.Mutex
	missing map[string]bool
}

func (m *probeMemory) isMissing(path string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.missing[path]
}

func (m *probeMemory) markMissing(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.missing == nil {
		m.missing = map[string]bool{}
	}
	m.missing[path] = true
}

// MissingProbes implements [ProbeMemory].
func (p *OpenAI) MissingProbes() []string {
	p.probes.mu.Lock()
	defer p.probes.mu.Unlock()
	out := make([]string, 0, len(p.probes.missing))
	for k := range p.probes.missing {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// SkipProbes implements [ProbeMemory].
func (p *OpenAI) SkipProbes(paths []string) {
	for _, path := range paths {
		p.probes.markMissing(path)
	}
}

// missingStatus reports whether an HTTP status says the path is not
// served.
func missingStatus(code int) bool {
	return code == http.StatusNotFound || code == http.StatusMethodNotAllowed
}

// probeResult is one probe's answer.
type probeResult struct {
	w   Window
	err error
}

// firstWindow runs the probes concurrently and returns the answer of the
// first probe, in the order given, that found a window; else every
// probe's error. It waits for all of them (each bounded by ctx), so that
// every path found missing is known when it returns.
func firstWindow(ctx context.Context, probes []func(context.Context) (Window, error)) (Window, []error) {
	results := make([]probeResult, len(probes))
	var wg sync.WaitGroup
	for i, probe := range probes {
		wg.Go(func() {
			w, err := probe(ctx)
			results[i] = probeResult{w, err}
		})
	}
	wg.Wait()
	var errs []error
	for _, r := range results {
		if r.err == nil {
			return r.w, nil
		}
		errs = append(errs, r.err)
	}
	return Window{}, errs
}

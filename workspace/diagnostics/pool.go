package diagnostics

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// ServerSpec is a language server loom may start for a folder.
type ServerSpec struct {
	// Name names the server in notices and loom.status.
	Name string
	// Command is the program and its arguments; the program is looked up
	// on PATH.
	Command []string
	// Languages maps the file extensions the server checks (".go") to
	// their LSP language ids ("go").
	Languages map[string]string
	// InitOptions are sent as initialize's initializationOptions.
	InitOptions map[string]any
}

// DefaultServers are the language servers loom looks for, by file type;
// for a type several serve, the first found on PATH is used.
var DefaultServers = []ServerSpec{
	// gopls answers textDocument/diagnostic (a definite answer for a
	// version, no waiting for its publications to go quiet) when asked.
	{Name: "gopls", Command: []string{"gopls"}, Languages: map[string]string{".go": "go"}, InitOptions: map[string]any{"pullDiagnostics": true}},
	{Name: "rust-analyzer", Command: []string{"rust-analyzer"}, Languages: map[string]string{".rs": "rust"}},
	{Name: "basedpyright", Command: []string{"basedpyright-langserver", "--stdio"}, Languages: map[string]string{".py": "python", ".pyi": "python"}},
	{Name: "pyright", Command: []string{"pyright-langserver", "--stdio"}, Languages: map[string]string{".py": "python", ".pyi": "python"}},
	{Name: "typescript-language-server", Command: []string{"typescript-language-server", "--stdio"}, Languages: map[string]string{
		".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript", ".cts": "typescript",
		".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript"}},
	{Name: "clangd", Command: []string{"clangd"}, Languages: map[string]string{
		".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp"}},
}

// PoolOptions configure a Pool.
type PoolOptions struct {
	// Root is the folder: absolute, symlinks resolved.
	Root string
	// Servers are tried in order for a file's extension; nil means
	// DefaultServers.
	Servers []ServerSpec
	// Wrap confines a server's process (the commands' sandbox); nil runs
	// it as it is.
	Wrap func(*exec.Cmd) error
	// Env is the servers' environment (the commands', without secrets).
	Env []string
	// Idle stops a server unused for this long; 0 means 10 minutes.
	Idle time.Duration
	// Log receives the servers' troubles; nil discards them.
	Log *slog.Logger
	// LookPath finds a program; nil means exec.LookPath.
	LookPath func(string) (string, error)
}

// Pool runs the language servers of one folder, one per server, started
// on first need and stopped when idle or closed. It is safe for
// concurrent use.
type Pool struct {
	o PoolOptions

	mu      sync.Mutex
	servers map[string]*server
	// missing are the programs not found on PATH, not looked up again.
	missing map[string]bool
	closed  bool
}

// NewPool returns a pool for o.Root; nothing starts until a file needs
// it.
func NewPool(o PoolOptions) *Pool {
	if o.Servers == nil {
		o.Servers = DefaultServers
	}
	if o.Idle <= 0 {
		o.Idle = 10 * time.Minute
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.LookPath == nil {
		o.LookPath = exec.LookPath
	}
	return &Pool{o: o, servers: map[string]*server{}, missing: map[string]bool{}}
}

// Serves reports whether a server on PATH checks path's type.
func (p *Pool) Serves(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, spec := range p.o.Servers {
		if _, ok := spec.Languages[ext]; ok && len(spec.Command) > 0 && !p.missing[spec.Command[0]] {
			return true
		}
	}
	return false
}

// Prime gives the server for path's language the file's text now (its
// start too, if needed) and lets it work in the background, so that the
// question about the same text before an edit is answered at once.
func (p *Pool) Prime(path, text string) {
	srv, lang, err := p.server(path)
	if err != nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), primeWait)
		defer cancel()
		_, _ = srv.diagnostics(ctx, path, lang, text)
	}()
}

// primeWait bounds Prime's background wait (a cold gopls on a big module).
const primeWait = 60 * time.Second

// Diagnostics gives the problems of path's text as its language server
// sees them: ErrNotServed when no server serves the file, ErrUnavailable
// when the server is still starting when ctx ends, or when it did not
// answer in time.
func (p *Pool) Diagnostics(ctx context.Context, path, text string) ([]Diagnostic, error) {
	srv, lang, err := p.server(path)
	if err != nil {
		return nil, err
	}
	return srv.diagnostics(ctx, path, lang, text)
}

// Running names the servers running now, for loom.status.
func (p *Pool) Running() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var names []string
	for name, s := range p.servers {
		if s.alive() {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Close stops every server and waits for them to exit.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	servers := p.servers
	p.servers = map[string]*server{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() { defer wg.Done(); s.stop() }()
	}
	wg.Wait()
}

// server returns the running server for path's language, starting it.
func (p *Pool) server(path string) (*server, string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, "", fmt.Errorf("%w: the folder is closed", ErrUnavailable)
	}
	for _, spec := range p.o.Servers {
		lang, ok := spec.Languages[ext]
		if !ok || len(spec.Command) == 0 || p.missing[spec.Command[0]] {
			continue
		}
		if s := p.servers[spec.Name]; s != nil && s.alive() {
			return s, lang, nil
		}
		prog, err := p.o.LookPath(spec.Command[0])
		if err != nil {
			p.missing[spec.Command[0]] = true
			continue
		}
		s := startServer(spec, prog, p.o, func(s *server) { p.forget(spec.Name, s) })
		p.servers[spec.Name] = s
		return s, lang, nil
	}
	return nil, "", fmt.Errorf("%w: no language server for %s files", ErrNotServed, ext)
}

// forget drops s once it stopped, so that the next need starts it anew.
func (p *Pool) forget(name string, s *server) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.servers[name] == s {
		delete(p.servers, name)
	}
}

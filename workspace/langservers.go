package workspace

import (
	"fmt"
	"log/slog"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
	"github.com/loom-lsp/loom-lsp/workspace/diagnostics"
)

// langServers is the folder's pool of language servers loom runs itself
// (for front ends whose client gives no diagnostics), kept while the
// configuration that shaped it holds.
type langServers struct {
	mu   sync.Mutex
	pool *diagnostics.Pool
	// key names the configuration and sandbox the pool was made for.
	key string
}

// poolFor returns the pool the conversations of the folder at dir use
// under cfg, whose commands run in sb, or nil when loom starts no
// language server: diagnostics off, or nothing to confine it in while
// commands are not allowed outside the sandbox. A language server runs
// the project's build (rust-analyzer's build scripts, gopls's go list):
// it gets exactly what commands get. Called on the folder's goroutine.
func (l *langServers) poolFor(cfg config.Config, sb *sandbox.Sandbox, dir string, log *slog.Logger) *diagnostics.Pool {
	allowed := cfg.Tools.Diagnostics != config.DiagnosticsOff &&
		((sb.Active() && cfg.Tools.Bash != config.PolicyDeny) || (!sb.Active() && cfg.Tools.Bash == config.PolicyAllow))
	l.mu.Lock()
	defer l.mu.Unlock()
	if !allowed {
		l.replace(nil, "")
		return nil
	}
	key := fmt.Sprintf("%p|%v|%s", sb, cfg.Tools.LanguageServers, cfg.Model.APIKeyEnv)
	if l.pool != nil && l.key == key {
		return l.pool
	}
	var wrap func(c *exec.Cmd) error
	if sb.Active() {
		wrap = sb.Wrap
	}
	l.replace(diagnostics.NewPool(diagnostics.PoolOptions{
		Root:    dir,
		Servers: serverSpecs(cfg.Tools.LanguageServers),
		Wrap:    wrap,
		Env:     tools.CommandEnviron([]string{cfg.Model.APIKeyEnv}),
		Log:     log.With("part", "language servers"),
	}), key)
	return l.pool
}

// replace puts pool in place of the current one, which stops in the
// background. l.mu is held.
func (l *langServers) replace(pool *diagnostics.Pool, key string) {
	if old := l.pool; old != nil && old != pool {
		go old.Close()
	}
	l.pool, l.key = pool, key
}

// close stops the folder's language servers and waits for them.
func (l *langServers) close() {
	l.mu.Lock()
	pool := l.pool
	l.pool, l.key = nil, ""
	l.mu.Unlock()
	if pool != nil {
		pool.Close()
	}
}

// running names the language servers running now, for loom.status.
func (l *langServers) running() []string {
	l.mu.Lock()
	pool := l.pool
	l.mu.Unlock()
	if pool == nil {
		return nil
	}
	return pool.Running()
}

// serverSpecs are the user's language servers, then the built-in ones.
func serverSpecs(user map[string]config.LanguageServer) []diagnostics.ServerSpec {
	if len(user) == 0 {
		return nil
	}
	var specs []diagnostics.ServerSpec
	for _, name := range slices.Sorted(maps.Keys(user)) {
		ls := user[name]
		langs := map[string]string{}
		for _, ext := range ls.Extensions {
			lang := ls.Language
			if lang == "" {
				lang = strings.TrimPrefix(ext, ".")
			}
			langs[strings.ToLower(ext)] = lang
		}
		opts := ls.InitOptions
		if i := slices.IndexFunc(diagnostics.DefaultServers, func(d diagnostics.ServerSpec) bool { return d.Name == name }); opts == nil && i >= 0 {
			opts = diagnostics.DefaultServers[i].InitOptions
		}
		specs = append(specs, diagnostics.ServerSpec{Name: name, Command: ls.Command, Languages: langs, InitOptions: opts})
	}
	return append(specs, diagnostics.DefaultServers...)
}

package gitcommit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/internal/gitcmd"
)

// runner runs the real git CLI in a folder, with an environment that
// never prompts, holds no model API key (the user's hooks run in it) and
// pins every configuration key that would make git run a program
// (package gitcmd): git itself runs no hook, fsmonitor, pager or helper.
type runner struct {
	dir   string
	scrub []string // extra variable names to remove
	// extraEnv is added to the environment (GIT_INDEX_FILE=…).
	extraEnv []string
	// readHooksPath leaves core.hooksPath unpinned: only for Open's
	// rev-parse, which asks where the user's hooks are and runs none.
	readHooksPath bool
	// pins are more keys pinned (the filters a worktree file defines:
	// worktreeFilterPins).
	pins [][2]string
}

// withEnv returns a copy of g that adds kv ("NAME=value") to git's
// environment.
func (g runner) withEnv(kv ...string) runner {
	g.extraEnv = append(append([]string(nil), g.extraEnv...), kv...)
	return g
}

// run runs git with args and returns its standard output. A failure's
// error carries git's standard error.
func (g runner) run(ctx context.Context, stdin string, args ...string) (string, error) {
	return g.command(ctx, stdin, "git", args...)
}

// command runs name (git, or a hook) in g.dir with g's environment.
func (g runner) command(ctx context.Context, stdin, name string, args ...string) (string, error) {
	return g.commandWrapped(ctx, stdin, nil, name, args...)
}

// commandWrapped is command with the process rewritten by wrap (when not
// nil) before it starts: a hook in the sandbox. It stays in loom's
// process group, so that what kills the daemon's group kills its hook.
func (g runner) commandWrapped(ctx context.Context, stdin string, wrap func(*exec.Cmd) error, name string, args ...string) (string, error) {
	prog := name
	if name == "git" {
		prog = gitcmd.Program("git") // never one a command put on PATH
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = g.dir
	cmd.Env = g.env()
	cmd.WaitDelay = 5 * time.Second
	if wrap != nil {
		if err := wrap(cmd); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
	}
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		what := name
		if name == "git" && len(args) > 0 {
			what = "git " + args[0]
		}
		return stdout.String(), fmt.Errorf("%s: %w: %s", what, err, tail(msg, 2000))
	}
	return stdout.String(), nil
}

func (g runner) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if secretVar(name, g.scrub) || name == "GIT_INDEX_FILE" || name == "GIT_DIR" || name == "GIT_WORK_TREE" {
			continue
		}
		env = append(env, kv)
	}
	if !pinConfig {
		return append(append(env, "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=:"), g.extraEnv...)
	}
	hooks := gitcmd.NoHooks
	if g.readHooksPath {
		hooks = ""
	}
	return append(gitcmd.Env(env, hooks, g.pins...), g.extraEnv...)
}

// pinConfig is false only in the benchmark that measures what the
// pinned configuration costs a commit.
var pinConfig = true

// secretVar reports whether an environment variable holds a model API
// key: one named in extra, or any *_API_KEY.
func secretVar(name string, extra []string) bool {
	if strings.HasSuffix(strings.ToUpper(name), "_API_KEY") {
		return true
	}
	for _, e := range extra {
		if e != "" && name == e {
			return true
		}
	}
	return false
}

// tail keeps the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// revParse resolves rev to an object name, "" when it does not exist
// (HEAD of a repository with no commits, a path absent from a tree).
func (g runner) revParse(ctx context.Context, rev string) string {
	out, err := g.run(ctx, "", "rev-parse", "--verify", "--quiet", rev)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// NulFields splits NUL-terminated git output (-z) into its fields.
func NulFields(out string) []string {
	var fs []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			fs = append(fs, f)
		}
	}
	return fs
}

// literal turns paths into pathspecs that match exactly those paths.
func literal(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = ":(literal)" + p
	}
	return out
}

// Short abbreviates a commit's name for messages.
func Short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

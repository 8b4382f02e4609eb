package workspace

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// gitRunner runs the real git CLI in a folder, with an environment that
// never prompts and holds no model API key (the user's hooks run in it).
type gitRunner struct {
	dir   string
	scrub []string // extra variable names to remove
	// extraEnv is added to the environment (GIT_INDEX_FILE=…).
	extraEnv []string
}

// withEnv returns a copy of g that adds kv ("NAME=value") to git's
// environment.
func (g gitRunner) withEnv(kv ...string) gitRunner {
	g.extraEnv = append(append([]string(nil), g.extraEnv...), kv...)
	return g
}

// run runs git with args and returns its standard output. A failure's
// error carries git's standard error.
func (g gitRunner) run(ctx context.Context, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = g.dir
	cmd.Env = g.env()
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
		return stdout.String(), fmt.Errorf("git %s: %w: %s", args[0], err, tail(msg, 2000))
	}
	return stdout.String(), nil
}

func (g gitRunner) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if secretVar(name, g.scrub) || name == "GIT_INDEX_FILE" || name == "GIT_DIR" || name == "GIT_WORK_TREE" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true")
	return append(env, g.extraEnv...)
}

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

// toplevel returns the root of the worktree that contains g.dir, or an
// error when it is not in a git repository.
func (g gitRunner) toplevel(ctx context.Context) (string, error) {
	out, err := g.run(ctx, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// revParse resolves rev to an object name, "" when it does not exist
// (HEAD of a repository with no commits, a path absent from a tree).
func (g gitRunner) revParse(ctx context.Context, rev string) string {
	out, err := g.run(ctx, "", "rev-parse", "--verify", "--quiet", rev)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// lines splits NUL-terminated output (-z).
func nulFields(out string) []string {
	var fs []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			fs = append(fs, f)
		}
	}
	return fs
}

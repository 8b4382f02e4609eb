package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/loom-lsp/loom-lsp/internal/gitcmd"
)

// applySteps applies the agent's steps to text, each as a three-way merge
// (ours: text so far, base: the step's old text, theirs: its new text).
// clean is false when a step's hunks overlap what text changed.
func (r *Repo) applySteps(ctx context.Context, text string, steps []Step) (string, bool, error) {
	for _, s := range steps {
		var clean bool
		var err error
		if text, clean, err = r.merge3(ctx, text, s.Old, s.New); err != nil || !clean {
			return "", false, err
		}
	}
	return text, true, nil
}

// merge3 merges the change from base to theirs into ours with
// `git merge-file`, and reports whether it merged without conflicts.
func (r *Repo) merge3(ctx context.Context, ours, base, theirs string) (string, bool, error) {
	switch {
	case base == theirs:
		return ours, true, nil
	case base == ours:
		return theirs, true, nil
	}
	dir, err := os.MkdirTemp("", "loom-merge-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(dir)
	names := [3]string{}
	for i, text := range [3]string{ours, base, theirs} {
		names[i] = filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(names[i], []byte(text), 0o600); err != nil {
			return "", false, err
		}
	}
	cmd := exec.CommandContext(ctx, gitcmd.Program("git"), "merge-file", "-p", "--quiet", names[0], names[1], names[2])
	cmd.Dir = r.Top
	cmd.Env = r.git.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), true, nil
	case errors.As(err, &exit) && exit.ExitCode() > 0 && exit.ExitCode() < 128:
		return "", false, nil // that many conflicts
	default:
		return "", false, fmt.Errorf("git merge-file: %w: %s", err, stderr.String())
	}
}

package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/loom-lsp/loom-lsp/tools/reap"

	"github.com/loom-lsp/loom-lsp/internal/gitcmd"
)

//go:embed bash.md
var bashDescription string

// bashWaitDelay bounds how long bash waits for the output pipes to close
// once the command exited or was killed (a process that left the group
// may still hold them).
const bashWaitDelay = 500 * time.Millisecond

// Bash is the bash tool: a shell command in the workspace root, in its
// own process group, killed as a whole on timeout or cancellation.
type Bash struct{}

type bashParams struct {
	Command string  `json:"command"`
	Timeout float64 `json:"timeout,omitempty"`
}

// Name implements Tool.
func (Bash) Name() string { return "bash" }

// Description implements Tool.
func (Bash) Description() string { return bashDescription }

// Mutating implements Tool: a command may change anything.
func (Bash) Mutating() bool { return true }

// Schema implements Tool.
func (Bash) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"command":{"type":"string","description":"the command, run with bash -c in the workspace root"},` +
		`"timeout":{"type":"number","exclusiveMinimum":0,"description":"timeout in seconds"}},` +
		`"required":["command"],"additionalProperties":false}`)
}

// Run implements Tool. A command that ran reports its exit code without
// IsError, whatever the code, since it may have changed files; a timeout
// is a tool error. When ctx is cancelled the process group is killed and
// Run returns the partial output with ctx's error. Whenever the command
// ends, what is left of its process group is killed, and so is every
// process it started that left the group (see package reap).
func (Bash) Run(ctx context.Context, env *Env, args json.RawMessage) (Result, error) {
	var p bashParams
	if err := decodeArgs(args, &p); err != nil {
		return toolError("bash: %v", err), nil
	}
	if strings.TrimSpace(p.Command) == "" {
		return toolError("bash: command is empty"), nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	timeout, note := env.bashTimeout(p.Timeout)
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	out := newHeadTail(env.maxOutput())
	latest := &lastLine{}
	cmd := exec.CommandContext(runCtx, gitcmd.Program("bash"), "-c", p.Command)
	cmd.Dir = env.Root
	// The marker, inherited by every descendant, finds those that leave
	// the process group (setsid, double fork) when the call ends.
	marker := reap.NewMarker()
	cmd.Env = append(scrubEnv(os.Environ(), env.ScrubEnv), reap.Env(marker))
	both := io.MultiWriter(out, latest)
	cmd.Stdout, cmd.Stderr = both, both
	cmd.SysProcAttr = shellProcAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = bashWaitDelay
	if err := env.Sandbox.Wrap(cmd); err != nil {
		return Result{}, fmt.Errorf("bash: %w", err)
	}
	note += env.Sandbox.FirstNotice()

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("bash: start: %w", err)
	}
	pgid := cmd.Process.Pid
	waitErr := waitReporting(cmd, env, latest)
	// Leftovers of the group (background jobs) do not outlive the call.
	// The leader was just reaped, so pgid cannot have been reused yet by
	// anything but an improbable wrap-around of the pid space.
	killGroup(pgid)
	// And so do the processes that left the group.
	reap.KillMarked(marker, false)
	elapsed := time.Since(start).Round(time.Millisecond)

	text := out.String()
	if text == "" {
		text = "(no output)\n"
	} else if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text = note + text
	code := cmd.ProcessState.ExitCode()
	switch {
	case ctx.Err() != nil:
		return Result{Text: text + "(cancelled; the command's processes were killed)\n", IsError: true, Summary: "bash: cancelled"}, ctx.Err()
	case runCtx.Err() != nil:
		return Result{
			Text:    fmt.Sprintf("tool error: the command timed out after %v; it and its processes were killed. Output so far:\n%s", timeout, text),
			IsError: true,
			Summary: fmt.Sprintf("bash: timed out after %v", timeout),
		}, nil
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return Result{}, fmt.Errorf("bash: %w", waitErr)
	}
	status := exitStatus(cmd.ProcessState)
	res := Result{
		Text:    fmt.Sprintf("%s(%s, %v)\n", text, status, elapsed),
		Summary: fmt.Sprintf("bash: %s (%v)", status, elapsed),
	}
	if b, ok := env.Sandbox.Explain(out.String(), cmd.Dir); ok {
		res.Blocked = b.What
		res.Text += b.String() + "\n"
		res.Summary = fmt.Sprintf("bash: %s, blocked by the sandbox (%v)", status, elapsed)
	}
	if code >= 0 {
		res.ExitCode = &code
	}
	return res, nil
}

// bashTimeout is a command's time limit: the one the model asked for
// (in seconds; 0 for the configured one), lowered to the maximum, with a
// note for the model when it was.
func (env *Env) bashTimeout(asked float64) (timeout time.Duration, note string) {
	timeout, maxTimeout := env.BashTimeout, env.BashMaxTimeout
	if timeout <= 0 {
		timeout = DefaultBashTimeout
	}
	if maxTimeout <= 0 {
		maxTimeout = DefaultBashMaxTimeout
	}
	if asked > 0 {
		timeout = time.Duration(asked * float64(time.Second))
		if timeout > maxTimeout || timeout < 0 { // < 0: overflow
			note = fmt.Sprintf("(timeout lowered to the maximum, %v)\n", maxTimeout)
			timeout = maxTimeout
		}
	}
	return timeout, note
}

// exitStatus says how a command ended: its exit code, or the signal
// that killed it.
func exitStatus(ps *os.ProcessState) string {
	code := ps.ExitCode()
	if code >= 0 {
		return fmt.Sprintf("exit code %d", code)
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by signal " + ws.Signal().String()
	}
	return "killed by a signal"
}

// bashProgressEvery is how often a running command's latest output line
// is reported, when it changed.
const bashProgressEvery = 500 * time.Millisecond

// waitReporting waits for cmd, reporting its latest output line as the
// call's progress whenever it changed (from this goroutine, so that no
// report can come after the result).
func waitReporting(cmd *exec.Cmd, env *Env, latest *lastLine) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(bashProgressEvery)
	defer tick.Stop()
	shown := ""
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			if line := latest.String(); line != shown {
				shown = line
				env.progress(line)
			}
		}
	}
}

// killGroup sends SIGKILL to the process group pgid; a group already
// gone is not an error.
func killGroup(pgid int) error {
	if pgid <= 1 {
		return nil
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// scrubEnv returns environ without the variables named in extra and
// those whose name ends in _API_KEY (any case).
func scrubEnv(environ, extra []string) []string {
	out := environ[:0:0]
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		drop := strings.HasSuffix(strings.ToUpper(name), "_API_KEY")
		for _, x := range extra {
			if name == x {
				drop = true
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// headTail is an io.Writer keeping the first and last halves of max
// bytes of what it is given, and counting the rest.
type headTail struct {
	mu    sync.Mutex
	max   int
	head  []byte
	tail  []byte // ring buffer once full
	pos   int    // next write position in tail once full
	total int64
}

func newHeadTail(max int) *headTail { return &headTail{max: max} }

func (w *headTail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	w.total += int64(n)
	if room := w.max/2 - len(w.head); room > 0 {
		k := min(room, len(p))
		w.head = append(w.head, p[:k]...)
		p = p[k:]
	}
	tailMax := w.max - w.max/2
	for len(p) > 0 && tailMax > 0 {
		if len(w.tail) < tailMax {
			k := min(tailMax-len(w.tail), len(p))
			w.tail = append(w.tail, p[:k]...)
			p = p[k:]
			continue
		}
		if len(p) >= tailMax {
			p = p[len(p)-tailMax:]
		}
		k := copy(w.tail[w.pos:], p)
		p = p[k:]
		w.pos = (w.pos + k) % tailMax
	}
	return n, nil
}

// String returns the kept output, valid UTF-8, with a note of the cut.
func (w *headTail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	tail := append(append([]byte(nil), w.tail[w.pos:]...), w.tail[:w.pos]...)
	cut := w.total - int64(len(w.head)) - int64(len(tail))
	var b strings.Builder
	b.Write(w.head)
	if cut > 0 {
		fmt.Fprintf(&b, "\n[… %d bytes of output cut; %d bytes in all …]\n", cut, w.total)
	}
	b.Write(tail)
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

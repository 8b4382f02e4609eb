package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// ttyRun runs the binary with stdin, stdout and stderr on a pseudo-
// terminal, as in a user's terminal, and returns all it printed; watch
// (if not nil) sees all printed so far after each read.
func ttyRun(t *testing.T, dir string, env []string, watch func(out string), args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(loomBinary, args...)
	cmd.Dir, cmd.Env = dir, env
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() { // ends with EIO once the child is gone
		defer close(copied)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			out.Write(buf[:n])
			if watch != nil && n > 0 {
				watch(out.String())
			}
			if err != nil {
				return
			}
		}
	}()
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	cmd.Wait()
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
		t.Fatalf("the terminal's output never ended")
	}
	return strings.ReplaceAll(out.String(), "\r\n", "\n"), cmd.ProcessState.ExitCode()
}

// slowScript keeps the model silent for 2.5 s, then runs command.
func slowScript(command string) string {
	return `
[[step]]
match.last_role = "user"
delay = "2500ms"
text = ["Running ", "it."]
  [[step.tool_call]]
  name = "bash"
  arguments = '{"command":"` + command + `"}'

[[step]]
match.last_tool_result_contains = "slept"
text = ["It slept."]
`
}

var (
	// modelWait is the progress line while the model is silent.
	modelWait = regexp.MustCompile(`waiting for the model \(([1-9][0-9]*)s\)`)
	// commandWait is the progress line while the command runs.
	commandWait = regexp.MustCompile(`running bash: echo waiting; until \[ -e .*\(([1-9][0-9]*)s\)`)
)

// waitUntilShown returns a command that waits until the terminal showed
// its progress line (60 s at most: the test then fails) and then prints
// "slept", and the watch that releases it.
func waitUntilShown(t *testing.T) (command string, watch func(out string)) {
	release := filepath.Join(t.TempDir(), "release")
	var once sync.Once
	open := func() {
		once.Do(func() { os.WriteFile(release, nil, 0o644) })
	}
	timer := time.AfterFunc(60*time.Second, open)
	t.Cleanup(func() { timer.Stop() })
	return "echo waiting; until [ -e " + release + " ]; do sleep 0.05; done; echo slept", func(out string) {
		if commandWait.MatchString(out) {
			open()
		}
	}
}

// On a terminal, text mode says what the turn waits for (the model, a
// command, with the seconds waited so far: whichever count the load
// allows) instead of staying silent, puts tool lines on their own line,
// and uses colour unless NO_COLOR is set.
func TestExecOnATerminalShowsProgress(t *testing.T) {
	dir := testRepo(t)
	command, watch := waitUntilShown(t)
	script := writeScript(t, slowScript(command))
	out, code := ttyRun(t, dir, isolatedEnv(t), watch, "exec", "--approve", "bash=allow", "--verbose", "--script", script, "run it")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !modelWait.MatchString(out) || !commandWait.MatchString(out) || !strings.Contains(out, "\x1b[32m✓ bash:") {
		t.Errorf("the terminal did not show the model's and the command's waits and the tool's end:\n%q", out)
	}
	shownOutput := false
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "it.") && strings.Contains(line, "▸") {
			t.Errorf("a tool line sticks to the text: %q", line)
		}
		shownOutput = shownOutput || (strings.Contains(line, "│") && strings.HasSuffix(line, "slept"))
	}
	if !shownOutput {
		t.Errorf("--verbose did not show the command's output:\n%q", out)
	}

	command, watch = waitUntilShown(t)
	script = writeScript(t, slowScript(command))
	out, code = ttyRun(t, dir, append(isolatedEnv(t), "NO_COLOR=1"), watch, "exec", "--approve", "bash=allow", "--script", script, "run it")
	if code != 0 || strings.Contains(out, "\x1b[3") || !modelWait.MatchString(out) {
		t.Errorf("with NO_COLOR: exit %d, want progress without colour:\n%q", code, out)
	}
}

// A bare loom-lsp on a terminal says what it is, once, and keeps serving.
func TestBareServeOnATerminalSaysWhatItIs(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	makeRaw(t, tty)
	cmd := exec.Command(loomBinary)
	cmd.Env = isolatedEnv(t)
	cmd.Stdin = tty
	var stdout bytes.Buffer
	stderr := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "meant to be started by an editor") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no hint on stderr: %q", stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the child's stderr
	}
	// Still serving: an LSP exit notification typed on the terminal ends it.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exitMsg := `{"jsonrpc":"2.0","method":"exit"}`
	io.WriteString(ptmx, "Content-Length: "+strconv.Itoa(len(exitMsg))+"\r\n\r\n"+exitMsg)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the server did not read the exit notification from the terminal; stderr:\n%s", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout is for protocol frames only, got %q", stdout.String())
	}
	if n := strings.Count(stderr.String(), "meant to be started by an editor"); n != 1 {
		t.Errorf("the hint appears %d times", n)
	}
	// Not on a terminal (an editor's pipe), nothing is said.
	r := runLoom(t, t.TempDir(), "")
	if strings.Contains(r.stderr, "meant to be started by an editor") {
		t.Errorf("the hint was printed without a terminal: %q", r.stderr)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// makeRaw puts the terminal in raw mode, so that LSP frames pass through
// it byte for byte.
func makeRaw(t *testing.T, tty *os.File) {
	t.Helper()
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatal(err)
	}
}

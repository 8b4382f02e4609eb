package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/internal/proctest"
)

// loomBinary is the loom-lsp binary built once for the tests that run it
// as a user would.
var loomBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "loom-bin-")
	if err != nil {
		panic(err)
	}
	loomBinary = filepath.Join(dir, "loom-lsp")
	if out, err := exec.Command("go", "build", "-o", loomBinary, ".").CombinedOutput(); err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// execRun is one run of the loom-lsp binary.
type execRun struct {
	code           int
	stdout, stderr string
}

// isolatedEnv is the environment of a test run: no model key, and config
// and state directories of its own.
func isolatedEnv(t testing.TB) []string {
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasSuffix(name, "_API_KEY") || strings.HasPrefix(name, "XDG_") {
			continue
		}
		env = append(env, kv)
	}
	home := t.TempDir()
	return append(env, "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+filepath.Join(home, "state"))
}

func runLoom(t *testing.T, dir string, stdin string, args ...string) execRun {
	t.Helper()
	return runLoomEnv(t, isolatedEnv(t), dir, stdin, args...)
}

func runLoomEnv(t *testing.T, env []string, dir string, stdin string, args ...string) execRun {
	t.Helper()
	return runLoomLines(t, env, dir, stdin, nil, args...)
}

// lineWriter calls each with every complete line written to it, as it
// comes, and keeps everything in all.
type lineWriter struct {
	all  bytes.Buffer
	part []byte
	each func(line string)
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.all.Write(b)
	w.part = append(w.part, b...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			return len(b), nil
		}
		if w.each != nil {
			w.each(string(w.part[:i]))
		}
		w.part = w.part[i+1:]
	}
}

// runLoomLines is runLoomEnv calling each (if not nil) with every line of
// stdout while loom-lsp runs, so a test can answer what it sees.
func runLoomLines(t *testing.T, env []string, dir string, stdin string, each func(line string), args ...string) execRun {
	t.Helper()
	cmd := exec.Command(loomBinary, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	stdout := &lineWriter{each: each}
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("run loom-lsp: %v", err)
	}
	// A run that hangs is killed, and the test says so, rather than
	// waiting for go test's own timeout.
	var hung atomic.Bool
	timer := time.AfterFunc(2*time.Minute, func() { hung.Store(true); cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	if hung.Load() {
		t.Fatalf("loom-lsp %s did not end within 2 minutes\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), stdout.all.String(), stderr.String())
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("run loom-lsp: %v", err)
	}
	return execRun{code: cmd.ProcessState.ExitCode(), stdout: stdout.all.String(), stderr: stderr.String()}
}

// writeScript writes a scripted model (see llm/testdata/README.md) and
// returns its path.
func writeScript(t testing.TB, body string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "model.toml", body)
}

// readEditGreet continues a scripted model's step with a read of
// greet.txt, edits it once it read "hello", and opens the step that
// follows the edit (the caller adds its text).
var readEditGreet = readEditGreetThen("edited greet.txt")

// readEditGreetThen is readEditGreet whose last step waits for a tool
// result containing then.
func readEditGreetThen(then string) string {
	return readEditScript("greet.txt", "hello", "hello", "hello, world", then)
}

// readEditScript continues a scripted model's step with a read of path,
// an edit of old into new once the read showed seen, and opens the step
// that waits for a tool result containing then (the caller adds its
// text).
func readEditScript(path, seen, old, new, then string) string {
	return `
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"` + path + `"}'

[[step]]
match.last_tool_result_contains = "` + seen + `"
  [[step.tool_call]]
  id = "e1"
  name = "edit_file"
  arguments = '{"path":"` + path + `","old_string":"` + old + `","new_string":"` + new + `"}'

[[step]]
match.last_tool_result_contains = "` + then + `"
`
}

// homeAndTmp are a $HOME and a $TMPDIR of the test's own (symlinks
// resolved), made.
func homeAndTmp(t *testing.T) (home, tmp string) {
	t.Helper()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home, tmp = filepath.Join(base, "home"), filepath.Join(base, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return home, tmp
}

// editScript reads greet.txt, edits it and says Done.
var editScript = `
[[step]]
match.last_role = "user"
text = ["Reading."]` + readEditGreet + `text = ["Done."]
usage = { prompt = 100, completion = 7 }
`

func TestExecJSONLEventsAndCommit(t *testing.T) {
	dir := testRepo(t)
	r := runLoom(t, dir, "", "exec", "--output", "jsonl", "--script", writeScript(t, editScript), "greet the world")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var types []string
	var commit, completed map[string]any
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stdout line is not JSON: %q", sc.Text())
		}
		typ, _ := ev["type"].(string)
		if typ == "" {
			t.Fatalf("event without a type: %q", sc.Text())
		}
		if len(types) == 0 || types[len(types)-1] != typ {
			types = append(types, typ)
		}
		switch typ {
		case "commit":
			commit = ev
		case "turn_completed":
			completed = ev
		}
	}
	want := "session_started turn_started message_delta message_completed tool_started tool_completed tool_started tool_completed commit message_delta message_completed turn_completed"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("event sequence\n got: %s\nwant: %s\nstdout:\n%s", got, want, r.stdout)
	}
	head := strings.TrimSpace(gitT(t, dir, "rev-parse", "HEAD"))
	if commit["sha"] != head {
		t.Fatalf("commit event %v, HEAD %s", commit, head)
	}
	if files := commit["files"].([]any); len(files) != 1 || files[0] != "greet.txt" {
		t.Fatalf("committed files %v", files)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "hello, world\n" {
		t.Fatalf("greet.txt = %q", got)
	}
	if completed["outcome"] != "done" || completed["usage"].(map[string]any)["total_tokens"].(float64) != 107 {
		t.Fatalf("turn_completed %v", completed)
	}
}

func TestExecTextOutputAndPromptFromStdin(t *testing.T) {
	dir := testRepo(t)
	r := runLoom(t, dir, "greet the world\n", "exec", "--script", writeScript(t, editScript), "-")
	// Each assistant message on lines of its own.
	if r.code != 0 || r.stdout != "Reading.\nDone.\n" {
		t.Fatalf("exit %d stdout %q stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "committed") {
		t.Fatalf("stderr does not mention the commit:\n%s", r.stderr)
	}
}

func TestExecExitCodes(t *testing.T) {
	dir := testRepo(t)
	authScript := writeScript(t, `
[[step]]
error = { status = 401, message = "invalid api key" }
`)
	broken := testRepo(t)
	os.WriteFile(filepath.Join(broken, ".loom.toml"), []byte("[model]\nnmae = \"x\"\n"), 0o644)
	for _, tc := range []struct {
		name   string
		dir    string
		args   []string
		code   int
		stderr string
	}{
		{"no prompt", dir, []string{"exec"}, 2, "PROMPT"},
		{"bad output", dir, []string{"exec", "--output", "xml", "hi"}, 2, "--output"},
		{"bad approve", dir, []string{"exec", "--approve", "rm=allow", "hi"}, 2, "--approve"},
		{"no model", dir, []string{"exec", "hi"}, 3, "base_url"},
		{"broken config", broken, []string{"exec", "--script", authScript, "hi"}, 3, ".loom.toml:2"},
		{"model error", dir, []string{"exec", "--script", authScript, "hi"}, 4, "invalid api key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runLoom(t, tc.dir, "", tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Fatalf("exit %d (want %d), stderr (want %q):\n%s", r.code, tc.code, tc.stderr, r.stderr)
			}
			if tc.code != 0 && r.stdout != "" {
				t.Fatalf("stdout should be empty, got %q", r.stdout)
			}
		})
	}
}

// bashForeverScript is a model that runs a command that never ends on its
// own; the command writes its pid (its process group) to pidFile first.
func bashForeverScript(t *testing.T, pidFile string) string {
	return writeScript(t, `
[[step]]
match.last_role = "user"
text = ["Running it."]
  [[step.tool_call]]
  name = "bash"
  arguments = '{"command":"echo $$ > `+pidFile+`; sleep 100 & sleep 100"}'
`)
}

// startMidBash starts exec with bashForeverScript and returns once the
// command runs, with the command's process group.
func startMidBash(t *testing.T, cmd *exec.Cmd, pidFile string, stderr *bytes.Buffer) int {
	t.Helper()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return pid
		}
		time.Sleep(10 * time.Millisecond) // polling a file the child writes
	}
	cmd.Process.Kill()
	t.Fatalf("bash never started; stderr:\n%s", stderr.String())
	return 0
}

func TestExecSIGINTMidBashKillsTheCommand(t *testing.T) {
	dir, pidFile := testRepo(t), filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(loomBinary, "exec", "--approve", "bash=allow", "--script", bashForeverScript(t, pidFile), "run forever")
	cmd.Dir, cmd.Env = dir, isolatedEnv(t)
	var stderr bytes.Buffer
	pid := startMidBash(t, cmd, pidFile, &stderr)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d (%v), want 130; stderr:\n%s", code, err, stderr.String())
	}
	if alive := proctest.LivingInGroup(pid); len(alive) > 0 {
		t.Fatalf("processes of the command's group %d survived: %v", pid, alive)
	}
}

// A reader that goes away (exec ... | head -n 1) cancels the turn: the
// command is killed and exec exits 130 instead of dying of SIGPIPE.
func TestExecClosedStdoutKillsTheCommand(t *testing.T) {
	dir, pidFile := testRepo(t), filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(loomBinary, "exec", "--output", "jsonl", "--approve", "bash=allow", "--script", bashForeverScript(t, pidFile), "run forever")
	cmd.Dir, cmd.Env = dir, isolatedEnv(t)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	pid := startMidBash(t, cmd, pidFile, &stderr)
	stdout.Close() // the reader goes away
	// exec must notice at once, not when the command would have ended.
	timer := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d (%v), want 130; stderr:\n%s", code, err, stderr.String())
	}
	if alive := proctest.LivingInGroup(pid); len(alive) > 0 {
		t.Fatalf("processes of the command's group %d survived: %v", pid, alive)
	}
}

// After an exec killed with SIGKILL mid-turn, the next exec in the folder
// runs its own turn (the journal's interrupted turn is closed on resume).
func TestExecAfterAKilledExec(t *testing.T) {
	dir, pidFile, env := testRepo(t), filepath.Join(t.TempDir(), "pid"), isolatedEnv(t)
	cmd := exec.Command(loomBinary, "exec", "--approve", "bash=allow", "--script", bashForeverScript(t, pidFile), "run forever")
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	pid := startMidBash(t, cmd, pidFile, &stderr)
	cmd.Process.Kill()
	cmd.Wait()
	syscall.Kill(-pid, syscall.SIGKILL) // the orphaned command, which SIGKILL left behind
	for _, args := range [][]string{{"exec", "--script", writeScript(t, editScript), "greet"}, {"exec", "--resume", "--script", writeScript(t, editScript), "greet"}} {
		r := runLoomEnv(t, env, dir, "", args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Done.") {
			t.Fatalf("%v after a killed exec: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
		}
		gitT(t, dir, "reset", "-q", "--hard", "HEAD~1") // undo the edit for the next run
	}
}

// The demo's speed is not asserted here (a wall-clock bound fails on a
// loaded machine); README.md states its measured cold and warm times.
func TestDemoRunsOffline(t *testing.T) {
	r := runLoom(t, t.TempDir(), "", "demo")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"● committed", "loom: edit greet.sh", "+echo \"Hello, $name!\"", "── git log ──", "✓ bash: exit code 0", "loom.toml", "loom-lsp exec --approve bash=allow"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// testRepo makes a git repository with greet.txt committed.
func testRepo(t *testing.T) string { return gittest.Repo(t, map[string]string{"greet.txt": "hello\n"}) }

func gitT(t *testing.T, dir string, args ...string) string { return gittest.Run(t, dir, args...) }

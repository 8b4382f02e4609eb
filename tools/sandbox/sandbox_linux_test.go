package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// world is a home, a temp dir, a workspace (a git repository with loom's
// configuration) and another repository next to it, all in a test's
// temp dir, with HOME and TMPDIR pointing at them.
type world struct {
	home, tmp, ws, other string
}

func newWorld(t *testing.T) world {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := world{home: base + "/home", tmp: base + "/tmp", ws: base + "/ws", other: base + "/other-repo"}
	for _, f := range []string{
		w.home + "/.ssh/id_rsa", w.home + "/.bashrc", w.home + "/.cache/x/keep",
		w.ws + "/.git/hooks/keep", w.ws + "/.git/config", w.ws + "/.loom.toml", w.ws + "/.vscode/settings.json", w.ws + "/src/a.go",
		w.other + "/x", w.tmp + "/keep",
	} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("original\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", w.home)
	t.Setenv("TMPDIR", w.tmp)
	for _, v := range []string{"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "GOCACHE", "GOMODCACHE", "GOPATH"} {
		t.Setenv(v, "")
	}
	return w
}

// requireLandlock skips only where the kernel really has no Landlock.
func requireLandlock(t testing.TB, s *Sandbox) {
	t.Helper()
	if !s.Active() {
		t.Skipf("no Landlock here: %s", s.Unavailable())
	}
}

// inModes runs test once with user namespaces and once with Landlock
// alone (where user namespaces are missing).
func inModes(t *testing.T, test func(t *testing.T, userns bool)) {
	t.Run("namespaces", func(t *testing.T) { test(t, true) })
	t.Run("landlock alone", func(t *testing.T) { test(t, false) })
}

// sandboxIn is New(p), made to use user namespaces or not; the test is
// skipped where Landlock, or the user namespaces asked for, are missing.
func sandboxIn(t *testing.T, p Policy, userns bool) *Sandbox {
	t.Helper()
	s := New(p)
	requireLandlock(t, s)
	if userns && !s.sys.userns {
		t.Skipf("no user namespaces here: %s", s.sys.why)
	}
	s.sys.userns = userns
	return s
}

// sh runs script with bash in dir under s, returning its output and
// exit code.
func sh(t testing.TB, s *Sandbox, dir, script string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("run %q: %v", script, err)
		}
	}
	return string(out), cmd.ProcessState.ExitCode()
}

func TestSandboxConfinesWrites(t *testing.T) {
	// Where user namespaces are missing, the same holds, but for a new
	// file at the top of the folder.
	inModes(t, testConfinesWrites)
}

func testConfinesWrites(t *testing.T, userns bool) {
	w := newWorld(t)
	s := sandboxIn(t, Policy{Root: w.ws}, userns)
	for _, tc := range []struct {
		name, script, path string
		allowed            bool
	}{
		{"workspace file", "echo new > x", w.ws + "/x", userns},
		{"workspace file in a folder", "echo new > src/b.go", w.ws + "/src/b.go", true},
		{"workspace subdir", "echo new > src/a.go", w.ws + "/src/a.go", true},
		{"temp dir", `echo new > "$TMPDIR/x"`, w.tmp + "/x", true},
		{"cache", "echo new > ~/.cache/x/keep", w.home + "/.cache/x/keep", true},
		{"home", "echo new > ~/x", w.home + "/x", false},
		{"bashrc", "echo new >> ~/.bashrc", w.home + "/.bashrc", false},
		{"other repository", "echo new > ../other-repo/x", w.other + "/x", false},
		{"git hook", "echo new > .git/hooks/pre-commit", w.ws + "/.git/hooks/pre-commit", false},
		{"git config", "echo new >> .git/config", w.ws + "/.git/config", false},
		{"loom config", "echo new > .loom.toml", w.ws + "/.loom.toml", false},
		{"loom config removed", "rm -f .loom.toml", w.ws + "/.loom.toml", false},
		{"vscode settings", "echo new > .vscode/settings.json", w.ws + "/.vscode/settings.json", false},
		{"git dir renamed", "mv .git .git-old && mkdir -p .git/hooks && echo new > .git/hooks/pre-commit", w.ws + "/.git/hooks/pre-commit", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(tc.path)
			out, code := sh(t, s, w.ws, tc.script)
			after, _ := os.ReadFile(tc.path)
			changed := string(before) != string(after)
			if tc.allowed {
				if code != 0 || !changed {
					t.Fatalf("%q: exit %d, changed %v, output %q", tc.script, code, changed, out)
				}
				return
			}
			if code == 0 || changed {
				t.Fatalf("%q was not blocked: exit %d, changed %v, output %q", tc.script, code, changed, out)
			}
			b, ok := s.Explain(out, w.ws)
			if !ok || !strings.Contains(b.What, "write to ") {
				t.Errorf("%q: output %q not explained as a blocked write: %+v", tc.script, out, b)
			}
		})
	}
}

func TestSandboxHidesSecrets(t *testing.T) {
	w := newWorld(t)
	s := New(Policy{Root: w.ws, Hide: []string{"~/.cache/x"}})
	requireLandlock(t, s)
	out, code := sh(t, s, w.ws, "cat ~/.ssh/id_rsa")
	if code == 0 || strings.Contains(out, "original") {
		t.Fatalf("read ~/.ssh/id_rsa: exit %d, %q", code, out)
	}
	if b, ok := s.Explain(out, w.ws); !ok || b.What != "read of "+w.home+"/.ssh/id_rsa" {
		t.Errorf("not explained: %q -> %+v", out, b)
	}
	if out, code := sh(t, s, w.ws, "cat ~/.cache/x/keep"); code == 0 {
		t.Errorf("tools.sandbox_hide not honoured: %q", out)
	}
	if out, code := sh(t, s, w.ws, "cat ~/.bashrc /etc/hostname src/a.go && ls / ~ >/dev/null"); code != 0 {
		t.Errorf("ordinary reads blocked: exit %d, %q", code, out)
	}
}

// listen starts a TCP server on loopback that answers "hi" to each
// connection; it returns its port.
func listen(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hi\n"))
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestSandboxNetwork(t *testing.T) {
	// "off" is a network namespace of its own; without user namespaces,
	// Landlock's TCP rules.
	inModes(t, testNetwork)
}

func testNetwork(t *testing.T, userns bool) {
	w := newWorld(t)
	port := listen(t)
	other := listen(t)
	connect := func(p int) string { return fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -c 2 <&3", p) }
	for _, tc := range []struct {
		name    string
		policy  Policy
		port    int
		reaches bool
	}{
		{"on", Policy{Network: NetworkOn}, port, true},
		{"off", Policy{Network: NetworkOff}, port, false},
		{"allowed port", Policy{Network: NetworkAllow, Allow: []string{fmt.Sprintf("localhost:%d", port)}}, port, true},
		{"other port", Policy{Network: NetworkAllow, Allow: []string{fmt.Sprintf("localhost:%d", port)}}, other, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.policy.Root = w.ws
			s := sandboxIn(t, tc.policy, userns)
			out, code := sh(t, s, w.ws, connect(tc.port))
			if got := code == 0 && out == "hi"; got != tc.reaches {
				t.Fatalf("network %s, port %d: exit %d, %q; want reached=%v", tc.name, tc.port, code, out, tc.reaches)
			}
			if !tc.reaches {
				if b, ok := s.Explain(out, w.ws); !ok || !strings.Contains(b.What, "network") && !strings.Contains(b.What, "port") {
					t.Errorf("not explained: %q -> %+v", out, b)
				}
			}
		})
	}
}

// TestSandboxCannotReachOtherProcesses: a sandboxed command cannot signal
// a process outside the sandbox (Landlock's signal scoping), nor read its
// environment (the user namespace).
func TestSandboxCannotReachOtherProcesses(t *testing.T) {
	inModes(t, testCannotReachOtherProcesses)
}

func testCannotReachOtherProcesses(t *testing.T, userns bool) {
	w := newWorld(t)
	s := sandboxIn(t, Policy{Root: w.ws}, userns)
	outside := exec.Command("sleep", "100")
	outside.Env = []string{"LOOM_TEST_SECRET=outside-secret"}
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { outside.Process.Kill(); outside.Wait() }()
	pid := fmt.Sprint(outside.Process.Pid)
	// The user namespace is what keeps /proc/PID/environ of the user's
	// other processes unreadable; Landlock alone does not.
	if out, code := sh(t, s, w.ws, "cat /proc/"+pid+"/environ"); userns && (code == 0 || strings.Contains(out, "outside-secret")) {
		t.Errorf("read another process's environment: exit %d, %q", code, out)
	}
	if s.sys.abi >= 6 {
		if out, code := sh(t, s, w.ws, "kill -9 "+pid); code == 0 {
			t.Errorf("killed a process outside the sandbox: %q", out)
		}
	}
	if out, code := sh(t, s, w.ws, "sleep 100 & kill $! && echo own"); code != 0 || out != "own\n" {
		t.Errorf("could not signal its own child: exit %d, %q", code, out)
	}
}

// TestSandboxSurvivesChurn: a directory granted entry by entry (it holds
// a hidden path) whose entries come and go, as /tmp's do, never makes a
// command fail to start.
func TestSandboxSurvivesChurn(t *testing.T) {
	w := newWorld(t)
	churn := filepath.Join(w.tmp, "churn")
	os.MkdirAll(filepath.Join(churn, "hidden"), 0o755)
	s := New(Policy{Root: w.ws, Hide: []string{filepath.Join(churn, "hidden")}})
	requireLandlock(t, s)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := filepath.Join(churn, fmt.Sprintf("f%d", i%50))
			if i%2 == 0 {
				os.WriteFile(p, nil, 0o644)
			} else {
				os.Remove(p)
				os.Mkdir(p, 0o755)
				os.Remove(p)
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for i := 0; i < 60; i++ {
		if out, code := sh(t, s, w.ws, "true"); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, out)
		}
	}
}

// With ReadOnlyRoot (plan mode's read-only commands) nothing in the
// workspace can be written, created or removed — also when the folder
// lies inside the writable temp dir —, while reads of it, and writes to
// the temp dir and the caches, work; a blocked write is explained as the
// read-only mode's.
func TestSandboxReadOnlyRoot(t *testing.T) {
	inModes(t, testReadOnlyRoot)
}

func testReadOnlyRoot(t *testing.T, userns bool) {
	w := newWorld(t)
	// The folder inside the temp dir, as t.TempDir() folders are.
	ws := w.tmp + "/ws"
	if err := os.Rename(w.ws, ws); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(w.tmp+"/d", 0o755); err != nil {
		t.Fatal(err)
	}
	s := sandboxIn(t, Policy{Root: ws, ReadOnlyRoot: true}, userns)
	for _, tc := range []struct {
		name, script, path string
		allowed            bool
	}{
		{"new file", "echo new > x", ws + "/x", false},
		{"file in a folder", "echo new > src/b.go", ws + "/src/b.go", false},
		{"existing file", "echo new > src/a.go", ws + "/src/a.go", false},
		{"removed file", "rm -f src/a.go", ws + "/src/a.go", false},
		{"git config", "echo new >> .git/config", ws + "/.git/config", false},
		// Without user namespaces the temp dir holding the folder is
		// granted entry by entry: no new file at its top level.
		{"temp dir", `echo new > "$TMPDIR/x"`, w.tmp + "/x", userns},
		{"temp subdir", `echo new > "$TMPDIR/d/x"`, w.tmp + "/d/x", true},
		{"cache", "echo new > ~/.cache/x/keep", w.home + "/.cache/x/keep", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(tc.path)
			out, code := sh(t, s, ws, tc.script)
			after, _ := os.ReadFile(tc.path)
			changed := string(before) != string(after)
			if tc.allowed {
				if code != 0 || !changed {
					t.Fatalf("%q: exit %d, changed %v, output %q", tc.script, code, changed, out)
				}
				return
			}
			if code == 0 || changed {
				t.Fatalf("%q was not blocked: exit %d, changed %v, output %q", tc.script, code, changed, out)
			}
			if b, ok := s.Explain(out, ws); within(tc.path, ws) && (!ok || !strings.Contains(b.Hint, "read-only")) {
				t.Errorf("%q: output %q not explained as a read-only write: %+v", tc.script, out, b)
			}
		})
	}
	if out, code := sh(t, s, ws, "cat src/a.go && ls -a . .git >/dev/null && grep -r original src"); code != 0 || !strings.Contains(out, "original") {
		t.Errorf("reads of the workspace blocked: exit %d, %q", code, out)
	}
	if d := s.Describe(); !strings.Contains(d, "the workspace read-only") || strings.Contains(d, "writes: workspace") {
		t.Errorf("Describe: %s", d)
	}
}

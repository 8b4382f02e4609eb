package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// connectVar makes this test binary, run as a sandboxed command, a unix
// socket client: it connects to the path the variable names, reads what
// the server says, and exits 0 when it got "hi" (bash cannot connect to
// a unix socket, and CI machines may lack socat and python).
const connectVar = "LOOM_SANDBOX_TEST_CONNECT"

func init() {
	p := os.Getenv(connectVar)
	if p == "" {
		return
	}
	c, err := net.DialTimeout("unix", p, 5*time.Second)
	if err != nil {
		fmt.Println("connect:", err)
		os.Exit(3)
	}
	buf := make([]byte, 2)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _ := c.Read(buf)
	fmt.Printf("%s", buf[:n])
	if string(buf[:n]) != "hi" {
		os.Exit(4)
	}
	os.Exit(0)
}

// serveUnix listens on a unix socket at path that says "hi" to each
// connection and sends its arrival on the returned channel.
func serveUnix(t *testing.T, path string) <-chan struct{} {
	t.Helper()
	if !strings.HasPrefix(path, "@") {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	arrived := make(chan struct{}, 16)
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			arrived <- struct{}{}
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
	return arrived
}

// connect runs this test binary under s as a client of the socket at
// path; it reports whether it reached the server, with its output.
func connect(t *testing.T, s *Sandbox, dir, path string) (bool, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), connectVar+"="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return err == nil, string(out)
}

// runtimeWorld is a world with a fake runtime directory: the test cannot
// make /run/user/$UID (it may not exist, and is the real user's when it
// does), so it points $XDG_RUNTIME_DIR, which the sandbox hides as it
// hides /run/user/$UID, at a directory of its own.
func runtimeWorld(t *testing.T) (world, string) {
	w := newWorld(t)
	run := filepath.Join(filepath.Dir(w.home), "run", "user", strconv.Itoa(os.Getuid()))
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", run)
	return w, run
}

func requireMounts(t *testing.T, s *Sandbox) {
	t.Helper()
	requireLandlock(t, s)
	if !s.sys.userns {
		t.Skipf("no user namespaces here, so no mount namespace to hide sockets in: %s", s.sys.why)
	}
}

// The sockets of the user's runtime directory (the session bus, the
// systemd user manager, gpg-agent…), of the temp directory (tmux, X11),
// the ssh agent's and docker's are out of a command's reach; those the
// user allow-lists and those in the workspace are not.
func TestSandboxHidesSockets(t *testing.T) {
	w, run := runtimeWorld(t)
	agent := filepath.Join(filepath.Dir(w.home), "agent", "agent.1")
	t.Setenv("SSH_AUTH_SOCK", agent)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+run+"/bus")
	docker := filepath.Join(filepath.Dir(w.home), "docker", "docker.sock")
	t.Setenv("DOCKER_HOST", "unix://"+docker)
	sockets := map[string]string{
		"session bus":          run + "/bus",
		"systemd user manager": run + "/systemd/private",
		"gpg-agent":            run + "/gnupg/S.gpg-agent",
		"tmux in the temp dir": w.tmp + "/tmux-0/default",
		"ssh agent":            agent,
		"docker":               docker,
		"ssh control master":   w.home + "/.ssh/cm-host",
	}
	arrived := map[string]<-chan struct{}{}
	for name, p := range sockets {
		arrived[name] = serveUnix(t, p)
	}
	inWorkspace := serveUnix(t, w.ws+"/srv.sock")
	s := New(Policy{Root: w.ws})
	requireMounts(t, s)
	for name, p := range sockets {
		if ok, out := connect(t, s, w.ws, p); ok {
			t.Errorf("%s (%s) reached from a command: %q", name, p, out)
		}
		select {
		case <-arrived[name]:
			t.Errorf("%s (%s) got a connection from a command", name, p)
		default:
		}
	}
	if ok, out := connect(t, s, w.ws, w.ws+"/srv.sock"); !ok {
		t.Errorf("a socket in the workspace is out of reach: %q", out)
	}
	<-inWorkspace
	out, code := sh(t, s, w.ws, `echo "[$SSH_AUTH_SOCK][$DBUS_SESSION_BUS_ADDRESS]"; touch "$XDG_RUNTIME_DIR/own" && ls -A "$XDG_RUNTIME_DIR"`)
	if code != 0 || out != "[][]\nown\n" {
		t.Errorf("the command's environment or runtime directory: exit %d, %q; want no socket variables and an empty writable runtime dir", code, out)
	}

	// Allow-listed: the bus (inside the hidden runtime directory), the
	// agent by its variable.
	s = New(Policy{Root: w.ws, Sockets: []string{"$XDG_RUNTIME_DIR/bus", "$SSH_AUTH_SOCK"}})
	for _, name := range []string{"session bus", "ssh agent"} {
		if ok, out := connect(t, s, w.ws, sockets[name]); !ok {
			t.Errorf("allow-listed %s out of reach: %q", name, out)
		}
		<-arrived[name]
	}
	if ok, out := connect(t, s, w.ws, sockets["systemd user manager"]); ok {
		t.Errorf("the user manager reached with only the bus allow-listed: %q", out)
	}
	out, _ = sh(t, s, w.ws, `echo "[$SSH_AUTH_SOCK][$DBUS_SESSION_BUS_ADDRESS]"`)
	if want := fmt.Sprintf("[%s][unix:path=%s/bus]\n", agent, run); out != want {
		t.Errorf("allow-listed sockets' variables: %q, want %q", out, want)
	}
}

// An abstract unix socket made outside the sandbox (the X server's, an
// older session bus's) is out of reach with the network on (Landlock's
// scoping, ABI 6); the command's own abstract sockets work.
func TestSandboxScopesAbstractSockets(t *testing.T) {
	w := newWorld(t)
	name := fmt.Sprintf("@loom-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	arrived := serveUnix(t, name)
	s := New(Policy{Root: w.ws, Network: NetworkOn})
	requireLandlock(t, s)
	if s.sys.abi < 6 {
		t.Skipf("Landlock ABI %d cannot scope abstract sockets (6 can): the README says they stay reachable here", s.sys.abi)
	}
	if ok, out := connect(t, s, w.ws, name); ok {
		t.Errorf("abstract socket %s reached from a command with the network on: %q", name, out)
	}
	select {
	case <-arrived:
		t.Error("the abstract socket got a connection from a command")
	default:
	}
}

// `systemd-run --user` asks the user's systemd to start a process outside
// the sandbox: from a command, it cannot reach the user manager. The test
// stands in for the manager (a listener at $XDG_RUNTIME_DIR/systemd/private
// and the bus, where systemd-run connects): without the hiding, systemd-run
// connects to it.
func TestSandboxSystemdRunUser(t *testing.T) {
	if _, err := exec.LookPath("systemd-run"); err != nil {
		t.Skip("systemd-run is not installed here (TestSandboxHidesSockets checks the runtime directory's sockets directly)")
	}
	w, run := runtimeWorld(t)
	manager := serveUnix(t, run+"/systemd/private")
	bus := serveUnix(t, run+"/bus")
	s := New(Policy{Root: w.ws})
	requireMounts(t, s)
	out, code := sh(t, s, w.ws, "systemd-run --user --quiet true")
	if code == 0 {
		t.Errorf("systemd-run --user succeeded from a command: %q", out)
	}
	select {
	case <-manager:
		t.Errorf("systemd-run --user reached the user manager: %q", out)
	case <-bus:
		t.Errorf("systemd-run --user reached the session bus: %q", out)
	default:
	}
	if !strings.Contains(out, "Failed") && !strings.Contains(out, "connect") {
		t.Logf("systemd-run said: %q", out)
	}
}

// Each credential file, made in a fake home, is unreadable from a command;
// tools.sandbox_unhide makes one readable again, also a file inside a
// hidden directory; loom's state directory is hidden wherever it is.
func TestSandboxHidesCredentials(t *testing.T) {
	w := newWorld(t)
	state := filepath.Join(filepath.Dir(w.home), "state")
	files := []string{".git-credentials", ".config/git/credentials", ".config/gh/hosts.yml", ".npmrc", ".pypirc",
		".cargo/credentials.toml", ".docker/config.json", ".kube/config", ".netrc", ".vault-token", ".ssh/known_hosts",
		".local/state/loom/other.jsonl", ".aws/credentials"}
	for _, f := range append(files, "../state/other.jsonl", "../xdgstate/loom/x.jsonl", "../xdgconfig/gh/hosts.yml") {
		p := filepath.Join(w.home, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("secret-"+f+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_STATE_HOME", filepath.Join(filepath.Dir(w.home), "xdgstate"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(filepath.Dir(w.home), "xdgconfig"))
	s := New(Policy{Root: w.ws, StateDir: state})
	requireLandlock(t, s)
	for _, f := range append(files, "../state/other.jsonl", "../xdgstate/loom/x.jsonl", "../xdgconfig/gh/hosts.yml") {
		p := filepath.Join(w.home, f)
		if out, code := sh(t, s, w.ws, "cat "+p); code == 0 || strings.Contains(out, "secret-") {
			t.Errorf("read %s: exit %d, %q", f, code, out)
		}
	}
	if out, code := sh(t, s, w.ws, "cat ~/.bashrc"); code != 0 {
		t.Errorf("~/.bashrc unreadable: %q", out)
	}
	s = New(Policy{Root: w.ws, Unhide: []string{"~/.npmrc", "~/.ssh/known_hosts"}})
	for _, f := range []string{".npmrc", ".ssh/known_hosts"} {
		if out, code := sh(t, s, w.ws, "cat ~/"+f); code != 0 || !strings.Contains(out, "secret-") {
			t.Errorf("unhidden %s unreadable: exit %d, %q", f, code, out)
		}
	}
	if out, code := sh(t, s, w.ws, "cat ~/.ssh/id_rsa ~/.pypirc"); code == 0 || strings.Contains(out, "original") {
		t.Errorf("unhiding one file showed others: %q", out)
	}
	if d := s.Describe(); !strings.Contains(d, "~/.pypirc") || !strings.Contains(d, "not hidden (tools.sandbox_unhide): ~/.npmrc, ~/.ssh/known_hosts") {
		t.Errorf("status does not say it: %s", d)
	}
}

package secret

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// helperVar makes the test binary act as a daemon holding a key: see
// TestMain.
const helperVar = "LOOM_SECRET_HELPER"

// testKeyVar is the variable holding the key in the helper.
const testKeyVar = "LOOM_TEST_SECRET_KEY"

// The helper, run as a child of the test: it takes the key unless told
// not to, optionally hides itself, then has a child of its own (as the
// bash tool would be) print the helper's /proc/$PPID/environ, and prints
// what Getenv returns after a line "--".
func TestMain(m *testing.M) {
	mode, ok := os.LookupEnv(helperVar)
	if !ok {
		os.Exit(m.Run())
	}
	if strings.Contains(mode, "take") {
		TakeKeys(testKeyVar)
	}
	if strings.Contains(mode, "hide") {
		if err := HideProcess(); err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(3)
		}
	}
	cmd := exec.Command("sh", "-c", `cat /proc/$PPID/environ 2>&1; tr '\0' '\n' < /proc/$PPID/environ 2>&1; echo; echo --env--; env`)
	out, _ := cmd.CombinedOutput()
	os.Stdout.Write(out)
	os.Stdout.WriteString("\n--\n" + Getenv(testKeyVar) + "\n")
	os.Exit(0)
}

// runHelper runs the helper with the key in its environment, as uid (0:
// the test's own user).
func runHelper(t *testing.T, mode, key string, uid uint32) (procView, getenv string) {
	t.Helper()
	bin := os.Args[0]
	if uid != 0 {
		bin = worldRunnable(t)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), helperVar+"="+mode, testKeyVar+"="+key)
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper %s: %v\n%s", mode, err, stderr.String())
	}
	view, got, ok := strings.Cut(string(out), "\n--\n")
	if !ok {
		t.Fatalf("helper output: %q", out)
	}
	return view, strings.TrimSpace(got)
}

// worldRunnable copies the test binary where another user can run it.
func worldRunnable(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "loom-secret-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := dir + "/secret.test"
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestTakeScrubsProcEnviron: after Take, a child reading
// /proc/$PPID/environ (as the bash tool could) does not find the key,
// while Getenv still returns it. This holds for root too.
func TestTakeScrubsProcEnviron(t *testing.T) {
	const key = "sk-proc-environ-test-0123456789"
	view, got := runHelper(t, "plain", key, 0)
	if !strings.Contains(view, key) {
		t.Fatalf("without Take the key is not in /proc/$PPID/environ, so this test proves nothing:\n%s", view)
	}
	view, got = runHelper(t, "take", key, 0)
	if strings.Contains(view, key) {
		t.Errorf("after Take, the child read the key in /proc/$PPID/environ or its own environment:\n%s", view)
	}
	if !strings.Contains(view, "PATH=") {
		t.Errorf("the child read nothing; the test would pass for a wrong reason:\n%s", view)
	}
	if got != key {
		t.Errorf("Getenv after Take = %q, want the key", got)
	}
}

// TestHideProcessFromSameUser: a non-dumpable process's /proc/PID/environ
// is unreadable to another process of the same (non-root) user. It runs
// the helper as nobody, which needs root.
func TestHideProcessFromSameUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the helper as another user")
	}
	const nobody = 65534
	const key = "sk-dumpable-test-0123456789"
	view, _ := runHelper(t, "plain", key, nobody)
	if !strings.Contains(view, key) {
		t.Skipf("as uid %d the child cannot read the helper's environ even when dumpable (%q); nothing to compare", nobody, view)
	}
	view, _ = runHelper(t, "hide", key, nobody)
	view, _, _ = strings.Cut(view, "--env--") // the child's own environment has the key: not taken here
	if strings.Contains(view, key) {
		t.Errorf("a non-dumpable process's environ was read by its child of the same user:\n%s", view)
	}
	if !strings.Contains(view, "Permission denied") {
		t.Errorf("want the read refused: %q", view)
	}
}

func TestRedactor(t *testing.T) {
	parent := NewRedactor(nil)
	parent.Add("sk-parent-key-0001")
	r := NewRedactor(parent)
	r.Add("sk-own-key-0002")
	r.Add(`we"ird<key>&0003`)
	r.Add("short") // too short to mask
	cases := []struct{ in, want string }{
		{"401: invalid key sk-own-key-0002 given", "401: invalid key [REDACTED] given"},
		{"parent sk-parent-key-0001.", "parent [REDACTED]."},
		{"Authorization: Bearer abc.DEF-123_x/y+z== end", "Authorization: Bearer [REDACTED] end"},
		{"authorization: bearer%20tok3n", "authorization: Bearer [REDACTED]"},
		{`json "we\"ird\u003ckey\u003e\u00260003"`, `json "[REDACTED]"`},
		{"raw we\"ird<key>&0003", "raw [REDACTED]"},
		{"short stays", "short stays"},
		{"Bearer [REDACTED] twice", "Bearer [REDACTED] twice"},
	}
	for _, c := range cases {
		if got := r.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	var buf bytes.Buffer
	w := r.Writer(&buf)
	if n, err := w.Write([]byte("log sk-own-key-0002\n")); err != nil || n != 20 {
		t.Errorf("Write = %d, %v", n, err)
	}
	if buf.String() != "log [REDACTED]\n" {
		t.Errorf("writer wrote %q", buf.String())
	}
}

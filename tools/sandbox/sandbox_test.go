package sandbox

import (
	"os/exec"
	"strings"
	"testing"
)

// TestWithoutLandlockSaysSo: where the kernel has no Landlock, commands
// run unconfined, and that is said: in the status line, and once in a
// command's result.
func TestWithoutLandlockSaysSo(t *testing.T) {
	s := &Sandbox{p: Policy{Root: t.TempDir()}, sys: system{why: "Landlock is not available on this kernel"}}
	if s.Active() {
		t.Fatal("active without Landlock")
	}
	if d := s.Describe(); !strings.HasPrefix(d, "no sandbox: Landlock is not available") || !strings.Contains(d, "full permissions") {
		t.Errorf("Describe() = %q", d)
	}
	first, second := s.FirstNotice(), s.FirstNotice()
	if !strings.Contains(first, "no sandbox") || second != "" {
		t.Errorf("FirstNotice() = %q then %q, want the notice once", first, second)
	}
	cmd := exec.Command("true")
	before := cmd.Path
	if err := s.Wrap(cmd); err != nil || cmd.Path != before || len(cmd.Args) != 1 {
		t.Errorf("Wrap changed a command it cannot sandbox: %v %v", cmd.Args, err)
	}
	if _, ok := s.Explain("bash: /etc/x: Permission denied", "/"); ok {
		t.Error("Explain blames a sandbox that is not there")
	}
	var off *Sandbox // tools.sandbox = "off"
	if !strings.Contains(off.Describe(), `tools.sandbox = "off"`) || off.FirstNotice() != "" || off.Wrap(exec.Command("true")) != nil {
		t.Errorf("a nil sandbox: %q", off.Describe())
	}
}

func TestExplainIgnoresWhatTheSandboxAllows(t *testing.T) {
	w := t.TempDir()
	s := &Sandbox{p: Policy{Root: w, Network: NetworkOn}, sys: system{abi: 7, userns: true}}
	for _, out := range []string{
		"touch: cannot touch 'x': Permission denied",          // in the workspace: a file mode, not the sandbox
		"curl: (7) Failed to connect to example.com port 443", // network on
		"all good",
	} {
		if b, ok := s.Explain(out, w); ok {
			t.Errorf("Explain(%q) = %+v, want nothing", out, b)
		}
	}
}

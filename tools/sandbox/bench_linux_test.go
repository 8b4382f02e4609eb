package sandbox

import (
	"os/exec"
	"syscall"
	"testing"
)

// BenchmarkBashTrue is the sandbox's cost per command: `bash -c true`
// started and waited for, bare, then under the sandbox (the helper's
// start, Landlock rules, and the user+mount namespace with its read-only
// mounts), then with the network off (a network namespace too).
func BenchmarkBashTrue(b *testing.B) {
	w := newWorldB(b)
	for _, bc := range []struct {
		name string
		s    *Sandbox
	}{
		{"bare", nil},
		{"sandboxed", New(Policy{Root: w})},
		{"sandboxed-network-off", New(Policy{Root: w, Network: NetworkOff})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.s != nil {
				requireLandlock(b, bc.s)
			}
			b.ReportAllocs()
			for b.Loop() {
				cmd := exec.Command("bash", "-c", "true")
				cmd.Dir = w
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				if err := bc.s.Wrap(cmd); err != nil {
					b.Fatal(err)
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
		})
	}
}

// newWorldB is a workspace with a .git and loom's configuration.
func newWorldB(b *testing.B) string {
	w := b.TempDir()
	for _, c := range [][]string{{"git", "init", "-q", w}, {"touch", w + "/.loom.toml"}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
	return w
}

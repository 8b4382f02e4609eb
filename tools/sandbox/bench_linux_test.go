package sandbox

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
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

// BenchmarkSocketHidingCost is what hiding unix sockets and credentials
// adds to a command: `bash -c true` under the sandbox with the sockets
// hidden (the runtime directory's tmpfs, the scans of /run, the temp
// directories and the hidden ones, a /dev/null over each socket found)
// and without, interleaved in one run; "with/without" is the ratio of
// their times.
func BenchmarkSocketHidingCost(b *testing.B) {
	w := newWorldB(b)
	with := New(Policy{Root: w})
	requireLandlock(b, with)
	without := New(Policy{Root: w})
	without.socketsShown = true
	var tWith, tWithout time.Duration
	run := func(s *Sandbox) time.Duration {
		start := time.Now()
		cmd := exec.Command("bash", "-c", "true")
		cmd.Dir = w
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := s.Wrap(cmd); err != nil {
			b.Fatal(err)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		return time.Since(start)
	}
	for b.Loop() {
		tWith += run(with)
		tWithout += run(without)
	}
	b.ReportMetric(float64(tWith.Microseconds())/float64(b.N), "µs-with/op")
	b.ReportMetric(float64(tWithout.Microseconds())/float64(b.N), "µs-without/op")
	b.ReportMetric(float64(tWith)/float64(tWithout), "with/without")
}

package reap

import (
	"github.com/loom-lsp/loom-lsp/internal/residency"

	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
)

// WatchdogArg is the first argument of the watchdog process: the
// program's main must call [RunWatchdogIf] before anything else.
const WatchdogArg = "__loom-lsp-reap-watchdog"

// watchdogPipe is the write end of the pipe the watchdog reads; it stays
// open for the life of this process (a global, so that no finalizer closes
// it), and the kernel closes it when the process dies, however it dies.
var watchdogPipe *os.File

// StartWatchdog starts this program again as a watchdog process, which
// outlives this one only to kill, once this process is gone, every process
// carrying one of its markers: the tools' processes that SIGKILL of the
// daemon would otherwise leave running. Starting it twice is a no-op.
func StartWatchdog() error {
	if watchdogPipe != nil {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd := exec.Command(exe, WatchdogArg, strconv.Itoa(os.Getpid()))
	cmd.Stdin = r
	cmd.Env = []string{} // it needs nothing, and must get no secret
	// Its own group: a Ctrl-C meant for the daemon's group must not stop
	// it before it has done its job.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return err
	}
	watchdogPipe = w
	go cmd.Wait() // reaps it should it end first
	return nil
}

// RunWatchdogIf runs the watchdog and exits when args (os.Args[1:]) are
// those StartWatchdog gives it; otherwise it returns at once.
func RunWatchdogIf(args []string) {
	if len(args) != 2 || args[0] != WatchdogArg {
		return
	}
	daemon, err := strconv.Atoi(args[1])
	if err != nil {
		os.Exit(2)
	}
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	// It waits for the daemon's whole life: it gives back the pages of
	// the binary that starting it mapped (some 30 MiB).
	_, _ = residency.ReleaseImage()
	_, _ = io.Copy(io.Discard, os.Stdin) // returns when the daemon is gone
	KillMarked(DaemonPrefix(daemon), true)
	os.Exit(0)
}

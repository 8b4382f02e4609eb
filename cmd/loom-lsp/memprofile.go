package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
)

// memProfileEnv names a file to write a heap profile to (go tool pprof):
// at exit, and on SIGUSR1 while the process runs (an idle serve). A
// diagnostic for measuring, not a setting.
const memProfileEnv = "LOOM_MEMPROFILE"

// startMemProfile arranges the heap profile memProfileEnv asks for, and
// returns what writes it at exit.
func startMemProfile(stderr io.Writer) (atExit func()) {
	path := os.Getenv(memProfileEnv)
	if path == "" {
		return func() {}
	}
	write := func() {
		runtime.GC()
		f, err := os.Create(path)
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "loom-lsp: %s: %v\n", memProfileEnv, err)
		}
	}
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			write()
		}
	}()
	return write
}

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// hideSockets hides the unix sockets of the plan in this process's
// private mount namespace (mountReadOnly made it private): it runs before
// Landlock, with the namespace's capabilities.
func hideSockets(pl plan) error {
	kept := keptUnder(pl.KeepSockets, pl.RuntimeDirs)
	defer func() {
		for _, k := range kept {
			unix.Close(k.fd)
		}
	}()
	found := findSockets(pl)
	for _, d := range pl.RuntimeDirs {
		if !isDir(d) {
			continue
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700,size=64m"); err != nil {
			return fmt.Errorf("hide %s: %w", d, err)
		}
	}
	for _, k := range kept {
		if err := showAgain(k); err != nil {
			return err
		}
	}
	for _, p := range found {
		if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("hide socket %s: %w", p, err)
		}
	}
	return nil
}

// keptSocket is an allow-listed socket inside a runtime directory, held
// open (O_PATH) across the tmpfs that hides the rest.
type keptSocket struct {
	path string
	fd   int
}

// keptUnder opens the kept sockets that lie inside dirs.
func keptUnder(keep, dirs []string) []keptSocket {
	var out []keptSocket
	for _, p := range keep {
		if !slices.ContainsFunc(dirs, func(d string) bool { return within(p, d) }) {
			continue
		}
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err == nil {
			out = append(out, keptSocket{path: p, fd: fd})
		}
	}
	return out
}

// showAgain bind-mounts a kept socket back at its path, in the tmpfs that
// now covers its runtime directory.
func showAgain(k keptSocket) error {
	if err := os.MkdirAll(filepath.Dir(k.path), 0o700); err != nil {
		return fmt.Errorf("keep socket %s: %w", k.path, err)
	}
	f, err := os.OpenFile(k.path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("keep socket %s: %w", k.path, err)
	}
	f.Close()
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(k.fd), k.path, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("keep socket %s: %w", k.path, err)
	}
	return nil
}

// findSockets returns the plan's SocketFiles that are sockets.
func findSockets(pl plan) []string {
	var out []string
	for _, p := range pl.SocketFiles {
		if st, err := os.Lstat(p); err == nil && st.Mode()&os.ModeSocket != 0 {
			out = append(out, p)
		}
	}
	return out
}

// socketRules are the Landlock rules the hidden sockets need: the private
// runtime directories are writable (a command may make its own sockets
// there), and the paths shown inside hidden directories readable.
func socketRules(pl plan, abi int) []landlock.Rule {
	var rules []landlock.Rule
	if pl.Mounts {
		for _, d := range pl.RuntimeDirs {
			if isDir(d) {
				r := landlock.RWDirs(d).IgnoreIfMissing()
				if abi >= 2 {
					r = r.WithRefer()
				}
				rules = append(rules, r)
			}
		}
	}
	for _, p := range pl.Show {
		switch {
		case !pl.hides(p):
		case isDir(p):
			rules = append(rules, landlock.RODirs(p).IgnoreIfMissing())
		case exists(p):
			rules = append(rules, landlock.ROFiles(p).IgnoreIfMissing())
		}
	}
	return rules
}

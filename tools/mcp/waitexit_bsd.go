//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package mcp

import "golang.org/x/sys/unix"

// waitExit blocks until process pid has exited, without reaping it (the
// transport's Wait does): a kqueue EVFILT_PROC/NOTE_EXIT event, which
// fires on exit and leaves the zombie to its parent's wait.
func waitExit(pid int) {
	kq, err := unix.Kqueue()
	if err != nil {
		return
	}
	defer unix.Close(kq)
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	events := make([]unix.Kevent_t, 1)
	for {
		// Registering fails with ESRCH when pid is gone already.
		n, err := unix.Kevent(kq, []unix.Kevent_t{ev}, events, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n > 0 {
			return
		}
	}
}

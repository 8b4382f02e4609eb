// Package proctest helps tests check that no child process outlives what
// started it.
package proctest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LivingInGroup lists the processes of process group pgid that are still
// running, as "pid (comm)". Zombies do not count: a killed orphan stays a
// zombie until init reaps it, and in a container init may never do so.
func LivingInGroup(pgid int) []string {
	var alive []string
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	want := strconv.Itoa(pgid)
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp …"; comm may hold spaces.
		end := bytes.LastIndexByte(b, ')')
		if end < 0 || end+2 > len(b) {
			continue
		}
		f := strings.Fields(string(b[end+2:]))
		if len(f) > 2 && f[2] == want && f[0] != "Z" {
			alive = append(alive, string(b[:end+1]))
		}
	}
	return alive
}

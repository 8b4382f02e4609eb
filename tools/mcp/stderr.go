package mcp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
)

const (
	// stderrTailBytes is how much of a server's stderr a report quotes.
	stderrTailBytes = 2048
	// stderrLineBytes is how much of one stderr line is kept (logged and
	// quoted); the rest of a longer line is read and counted, never held.
	stderrLineBytes = 4096
)

// readStderr logs the server's stderr line by line and keeps its tail. It
// reads until EOF whatever the lines' lengths: a server writing one huge
// line (a JSON dump, a progress bar redrawn with \r) must never find its
// stderr pipe full and block.
func (s *server) readStderr(r io.Reader, done chan struct{}) {
	defer close(done)
	log := s.m.opts.Logger.With("mcp_server", s.spec.Name)
	readLines(r, stderrLineBytes, func(line string) {
		log.Info("MCP server stderr", "line", line)
		s.stderr.add(line)
	})
}

// readLines calls emit with each line of r (without its line ending), each
// cut to at most limit bytes and then marked with how many were cut, until r
// ends or fails. It holds at most limit bytes of a line whatever its length.
func readLines(r io.Reader, limit int, emit func(string)) {
	br := bufio.NewReaderSize(r, 4096)
	var line []byte
	cut := 0
	for {
		chunk, err := br.ReadSlice('\n')
		ended := err == nil
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		if room := limit - len(line); room >= len(chunk) {
			line = append(line, chunk...)
		} else {
			line = append(line, chunk[:max(room, 0)]...)
			cut += len(chunk) - max(room, 0)
		}
		if err == bufio.ErrBufferFull {
			continue // the same line goes on
		}
		if ended || len(line) > 0 || cut > 0 {
			text := strings.TrimSuffix(string(line), "\r")
			if cut > 0 {
				text += fmt.Sprintf(" … (%d more bytes of this line cut)", cut)
			}
			emit(text)
		}
		if err != nil {
			return
		}
		line, cut = line[:0], 0
	}
}

// tail keeps the last stderrTailBytes of a server's stderr, by lines.
type tail struct {
	mu    sync.Mutex
	lines []string
	size  int
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > stderrTailBytes && len(t.lines) > 1 {
		t.size -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

package mcp

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// A server that writes one stderr line far over any line buffer (here 1 MiB,
// then more) before it serves: its stderr must be drained, else the pipe
// fills, the server blocks in write(2) and never answers (issue 47 item 5).
func TestServerWithAHugeStderrLineStillServes(t *testing.T) {
	s := mcptest.Find(t)
	script := `head -c 1048576 /dev/zero | tr '\0' x >&2; echo >&2; ` +
		`head -c 300000 /dev/zero | tr '\0' y >&2; printf '\nafter the dump\n' >&2; exec ` + s.Everything
	var logged syncBuffer
	m := NewManager(Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	t.Cleanup(m.Close)
	m.Apply([]Spec{{Name: "ev", Command: "sh", Args: []string{"-c", script}, Env: Environ(os.Getenv, nil)}})
	waitUntil(t, m, "the server ready despite its 1 MiB stderr line", func() bool { return toolByName(m, "ev__echo") != nil })
	if res := run(t, toolByName(m, "ev__echo"), &tools.Env{}, `{"message":"still answering"}`); !strings.Contains(res.Text, "still answering") {
		t.Errorf("echo = %+v", res)
	}
	m.mu.Lock()
	tail := m.servers["ev"].stderr.String()
	m.mu.Unlock()
	if !strings.Contains(tail, "after the dump") {
		t.Errorf("stderr tail = %.300q…, want the line after the dump", tail)
	}
	log := logged.String()
	if !strings.Contains(log, "(1044480 more bytes of this line cut)") || !strings.Contains(log, "(295904 more bytes of this line cut)") {
		t.Errorf("the log does not show both long lines cut: %.500q", log)
	}
	if len(log) > 100000 {
		t.Errorf("the log holds %d bytes of stderr, want each line cut", len(log))
	}
	if len(tail) > stderrTailBytes+stderrLineBytes+100 {
		t.Errorf("stderr tail holds %d bytes, want it bounded", len(tail))
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestReadLines(t *testing.T) {
	long := strings.Repeat("a", 10000)
	cases := []struct {
		in   string
		want []string
	}{
		{"one\ntwo\n", []string{"one", "two"}},
		{"crlf\r\nno nl", []string{"crlf", "no nl"}},
		{"\n\nx\n", []string{"", "", "x"}},
		{"12345678\n", []string{"12345678"}},
		{"123456789\nnext\n", []string{"12345678 … (1 more bytes of this line cut)", "next"}},
		{long + "\nafter\n", []string{"aaaaaaaa … (9992 more bytes of this line cut)", "after"}},
		{long, []string{"aaaaaaaa … (9992 more bytes of this line cut)"}},
		{"", nil},
	}
	for _, c := range cases {
		var got []string
		readLines(strings.NewReader(c.in), 8, func(l string) { got = append(got, l) })
		if !slices.Equal(got, c.want) {
			t.Errorf("readLines(%.20q) = %q, want %q", c.in, got, c.want)
		}
	}
	// A line longer than the reader's buffer, cut past the limit.
	var got []string
	readLines(strings.NewReader(strings.Repeat("b", 100000)+"\nz\n"), 5000, func(l string) { got = append(got, l) })
	if len(got) != 2 || got[0] != strings.Repeat("b", 5000)+fmt.Sprintf(" … (%d more bytes of this line cut)", 95000) || got[1] != "z" {
		t.Errorf("long line: %d lines, last %q", len(got), got[len(got)-1])
	}
}

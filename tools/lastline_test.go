package tools

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestLastLine(t *testing.T) {
	long := strings.Repeat("x", ProgressLineMax-1) + "é and more"
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"nothing yet", nil, ""},
		{"a partial line", []string{"compil", "ing"}, "compiling"},
		{"the last complete line", []string{"one\ntwo\n"}, "two"},
		{"blank lines keep the last one", []string{"ok pkg\n\n   \n"}, "ok pkg"},
		{"a line being written wins", []string{"done\nnext: "}, "next:"},
		{"carriage returns of a progress bar", []string{"10%\r", "55%\r"}, "55%"},
		{"colours and controls removed", []string{"\x1b[32mPASS\x1b[0m\tpkg\a\n"}, "PASS pkg"},
		{"capped, a cut rune dropped", []string{long + "\n"}, strings.Repeat("x", ProgressLineMax-1)},
		{"invalid UTF-8 dropped", []string{"a\xffb\n"}, "ab"},
		{"lines split across writes", []string{"fir", "st\nsec", "ond\n"}, "second"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l lastLine
			for _, w := range tc.writes {
				if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := l.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// bash reports each new latest line of its command's output as the call's
// progress, in order, from the tool's goroutine, and nothing after Run
// returned. The command waits on FIFOs the test opens only once the
// previous line was reported, so no timing is assumed.
func TestBashReportsItsLatestOutputLine(t *testing.T) {
	env := newEnv(t)
	dir := t.TempDir()
	for _, name := range []string{"go1", "go2"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	release := func(name string) {
		go func() { // opening a FIFO blocks until the command opens it
			if f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY, 0); err == nil {
				f.WriteString("go\n")
				f.Close()
			}
		}()
	}
	var mu sync.Mutex
	var got []string
	returned := false
	env.Progress = func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		if returned {
			t.Errorf("progress %q after Run returned", msg)
		}
		got = append(got, msg)
		switch msg {
		case "step one":
			release("go1")
		case "step two: 50%":
			release("go2")
		}
	}
	cmd := `echo step one; read x < ` + dir + `/go1; printf 'step two: 10%%\rstep two: 50%%'; read y < ` + dir + `/go2; echo; echo "$FOO_API_KEY" done`
	res := mustOK(t, run(t, Bash{}, env, map[string]any{"command": cmd}))
	mu.Lock()
	returned = true
	defer mu.Unlock()
	if !strings.Contains(res.Text, "step one\nstep two: 10%\rstep two: 50%\n done\n") {
		t.Errorf("result = %q", res.Text)
	}
	if len(got) < 2 || got[0] != "step one" || got[len(got)-1] != "step two: 50%" && got[len(got)-1] != "done" {
		t.Errorf("progress = %q, want step one, …, step two: 50%% (then maybe done)", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Errorf("the same line reported twice in a row: %q", got)
		}
	}
}

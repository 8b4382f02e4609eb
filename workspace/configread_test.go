package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/llm"
)

// TestConfigReloadRefusesDevicesAndFIFOs: a running session whose
// .loom.toml is replaced (by a git pull, or a command) with a link to
// /dev/zero, a FIFO or a 2 MB file reports it, keeps the previous
// configuration and keeps answering; a good file is honoured again.
func TestConfigReloadRefusesDevicesAndFIFOs(t *testing.T) {
	ed := newRecordingEditor()
	_, s, cfgFile := trustedConfigFolder(t, ed, "[model]\nname = \"first\"\n")
	dir := filepath.Dir(cfgFile)
	// Each bad file replaces the good one atomically, as git does.
	replace := func(make func(tmp string) error) {
		t.Helper()
		tmp := filepath.Join(dir, ".loom.toml.new")
		if err := make(tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfgFile); err != nil {
			t.Fatal(err)
		}
	}
	turns := uint64(0)
	for _, tc := range []struct {
		name string
		make func(tmp string) error
		want string
	}{
		{"/dev/zero", func(tmp string) error { return os.Symlink("/dev/zero", tmp) }, "a symlink to /dev/zero, outside"},
		{"fifo", func(tmp string) error { return syscall.Mkfifo(tmp, 0o644) }, "a FIFO"},
		{"2 MB", func(tmp string) error {
			return os.WriteFile(tmp, []byte("# "+strings.Repeat("x", 2<<20)+"\n"), 0o644)
		}, "larger than 1024 KiB"},
	} {
		from := ed.mark()
		replace(tc.make)
		ed.waitSince(t, from, tc.name+" reported", func(n Notification) bool {
			return n.Kind == NoteError && strings.Contains(n.Text, tc.want) && strings.Contains(n.Text, "keeping the previous configuration")
		})
		st, err := s.Status(context.Background())
		if err != nil || st.Model != "first" {
			t.Fatalf("%s: status %v, model %q: want the previous configuration", tc.name, err, st.Model)
		}
		if _, err := s.Ask(context.Background(), "still works"); err != nil {
			t.Fatalf("%s: Ask with the previous configuration: %v", tc.name, err)
		}
		turns++
		ed.turnEnded(t, turns)
		// Back to a good file before the next attack, so each one is a change.
		from = ed.mark()
		replace(func(tmp string) error { return os.WriteFile(tmp, []byte("[model]\nname = \"first\"\n"), 0o644) })
		ed.waitSince(t, from, "the reload", func(n Notification) bool { return n.Kind == NoteInfo && n.Text == "configuration reloaded" })
	}
}

// trustedConfigFolder is a host (closed at the test's end) with ed as its
// editor and a scripted model, on a folder the user trusts whose
// .loom.toml (cfgFile) holds toml; s is its conversation, ready.
func trustedConfigFolder(t *testing.T, ed Editor, toml string) (h *Host, s *Conversation, cfgFile string) {
	t.Helper()
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	trustIn(t, xdg, dir)
	cfgFile = filepath.Join(dir, ".loom.toml")
	if err := os.WriteFile(cfgFile, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	h = NewHost(HostOptions{Editor: ed, StateDir: t.TempDir(),
		Provider: func(config.Config, func(string) string) (llm.Provider, error) { return textModel(), nil }})
	t.Cleanup(h.Close)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, s)
	return h, s, cfgFile
}

// mark returns how many notifications the editor has seen.
func (e *recordingEditor) mark() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.notes)
}

// waitSince is waitFor among the notifications after the first from.
func (e *recordingEditor) waitSince(t testing.TB, from int, what string, ok func(Notification) bool) Notification {
	t.Helper()
	timer := time.AfterFunc(testWait, func() { e.mu.Lock(); e.cond.Broadcast(); e.mu.Unlock() })
	defer timer.Stop()
	deadline := time.Now().Add(testWait)
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		for _, n := range e.notes[from:] {
			if ok(n) {
				return n
			}
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, n := range e.notes[from:] {
				fmt.Fprintf(&b, "  %s %q\n", n.Kind, n.Text)
			}
			t.Fatalf("timed out waiting for %s; got:\n%s", what, b.String())
		}
		e.cond.Wait()
	}
}

// trustIn lists folder in [trust] folders of the user file under xdg.
func trustIn(t testing.TB, xdg, folder string) {
	t.Helper()
	os.MkdirAll(filepath.Join(xdg, "loom"), 0o700)
	if err := os.WriteFile(filepath.Join(xdg, "loom", "loom.toml"), []byte(fmt.Sprintf("[trust]\nfolders = [%q]\n", folder)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// reloadEditor is a recordingEditor that acts the moment it is told
// "configuration reloaded", as a client that reads the notice and asks
// loom.status at once.
type reloadEditor struct {
	*recordingEditor
	onReload func()
}

func (e *reloadEditor) Notify(n Notification) {
	if n.Kind == NoteInfo && n.Text == "configuration reloaded" && e.onReload != nil {
		e.onReload()
	}
	e.recordingEditor.Notify(n)
}

// TestReloadNoticeFollowsTheSettings: "configuration reloaded" is said
// only once the conversations have the new settings, so that a client
// that reads it and asks loom.status sees them (a client waiting for a
// later message would wait forever: the jsonrpc settings tests did,
// under load). Asked from within the notice, the status must already
// hold the new setting.
func TestReloadNoticeFollowsTheSettings(t *testing.T) {
	// Set before the host starts: the folder's goroutine reads it.
	var conv atomic.Pointer[Conversation]
	seen := make(chan string, 1)
	ed := &reloadEditor{recordingEditor: newRecordingEditor(), onReload: func() {
		s := conv.Load()
		if s == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), testWait)
		defer cancel()
		st, err := s.Status(ctx)
		got := string(st.Bash)
		if err != nil {
			got = err.Error()
		}
		select {
		case seen <- got: // the first notice's (the watcher may reload too)
		default:
		}
	}}
	h, s, cfgFile := trustedConfigFolder(t, ed, "[model]\nname = \"first\"\n")
	conv.Store(s)
	dir := filepath.Dir(cfgFile)
	// Replaced whole, as an editor saves: never read half written.
	tmp := filepath.Join(dir, ".loom.toml.new")
	os.WriteFile(tmp, []byte("[model]\nname = \"first\"\n[tools]\nbash = \"deny\"\n"), 0o644)
	if err := os.Rename(tmp, cfgFile); err != nil {
		t.Fatal(err)
	}
	f, err := h.Folder(dir)
	if err != nil {
		t.Fatal(err)
	}
	f.ReloadConfig()
	select {
	case got := <-seen:
		if got != "deny" {
			t.Fatalf("loom.status asked on the reload notice says bash = %q, want the new setting (deny)", got)
		}
	case <-time.After(testWait):
		t.Fatal("no reload notice")
	}
}

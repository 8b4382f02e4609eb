package workspace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// TestHelperRewindDaemon is the daemon TestRewindKilledBeforeItsRestores
// kills: one turn, then a files rewind of it, during which git blocks
// once the branch moved and before any file is restored.
func TestHelperRewindDaemon(t *testing.T) {
	if os.Getenv("LOOM_TEST_HELPER") != "rewind-kill9" {
		t.Skip("helper process")
	}
	dir := os.Getenv("LOOM_FOLDER")
	h := newTestHostIn(t, os.Getenv("LOOM_STATE"), editAndCreate, nil)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	ask(t, h, s, "greet the world")
	// git update-index of the user's index (not a temporary one) runs
	// after the rewind's update-ref: block there.
	real, _ := exec.LookPath("git")
	bin := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = update-index ] && [ -z \"$GIT_INDEX_FILE\" ] && { echo moved > %q; exec sleep 600; }; done\nexec %q \"$@\"\n", os.Getenv("LOOM_FIFO"), real)
	os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755)
	os.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	restore := fsm.RestoreFiles
	if os.Getenv("LOOM_RESTORE") == "both" {
		restore = fsm.RestoreBoth
	}
	s.Changes().Rewind(context.Background(), 1, restore)
	select {} // until killed
}

// A daemon killed with SIGKILL after a rewind moved the branch and before
// it restored the files: the resumed conversation finishes the restores
// (the edited file back, the created one gone) and says so, and records
// the rewind the daemon never stepped: the conversation is rewound (for
// a rewind of both) and the rewound commit is no longer the turn's.
// Nothing is left half-done, and a second resume does not do it again.
func TestRewindKilledBeforeItsRestores(t *testing.T) {
	for _, restore := range []string{"files", "both"} {
		t.Run(restore, func(t *testing.T) { testRewindKilledBeforeItsRestores(t, restore) })
	}
}

func testRewindKilledBeforeItsRestores(t *testing.T, restore string) {
	state := t.TempDir()
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
	fifo := newFIFO(t, "moved")
	killDaemonAt(t, "TestHelperRewindDaemon", fifo,
		[]string{"LOOM_TEST_HELPER=rewind-kill9", "LOOM_STATE=" + state, "LOOM_FOLDER=" + dir, "LOOM_FIFO=" + fifo, "LOOM_RESTORE=" + restore},
		60*time.Second, "the rewind's update-index")
	// Half done: the branch moved, the files are the agent's.
	if got := runGit(t, dir, "log", "-1", "--format=%s"); !strings.HasPrefix(got, "loom: rewind to turn 1") {
		t.Fatalf("HEAD is %q, not the rewind", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "hello, world\n" {
		t.Fatalf("greet.txt = %q before the resume", got)
	}

	h := newTestHostIn(t, state, editAndCreate, nil)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := h.editor.waitFor(t, "the finished restores' report", func(n Notification) bool {
		return strings.Contains(n.Text, "the daemon stopped while the rewind to turn 1 was restoring files")
	})
	if !strings.Contains(n.Text, "restored greet.txt, new file.txt") {
		t.Fatalf("report %q", n.Text)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "hello\n" {
		t.Fatalf("greet.txt = %q after the resume", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "new file.txt")); !os.IsNotExist(err) {
		t.Fatalf("new file.txt still there: %v", err)
	}
	checkRewindRecorded(t, h, s, restore)
	h.Close()
	h2 := newTestHostIn(t, state, editAndCreate, nil)
	if _, err := h2.AddFolder(dir); err != nil {
		t.Fatal(err)
	}
	h2.editor.waitFor(t, "the resume", func(n Notification) bool { return strings.Contains(n.Text, "resumed the conversation") })
	h2.editor.mu.Lock()
	defer h2.editor.mu.Unlock()
	for _, n := range h2.editor.notes {
		if strings.Contains(n.Text, "was restoring files") || strings.Contains(n.Text, "the rewind is recorded now") {
			t.Fatalf("the restores or the rewind were finished twice: %q", n.Text)
		}
	}
}

// checkRewindRecorded checks that the resumed conversation s holds the
// rewind to turn 1 the daemon died in: it said so, the conversation is
// back to before turn 1 for a rewind of both, and turn 1 has no commit
// left to rewind (its commit was taken back).
func checkRewindRecorded(t *testing.T, h *testHost, s *Conversation, restore string) {
	t.Helper()
	h.editor.waitFor(t, "the recorded rewind", func(n Notification) bool {
		return strings.Contains(n.Text, "the rewind is recorded now")
	})
	cps, err := s.Changes().Checkpoints(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case restore == "both" && len(cps) != 0:
		t.Fatalf("the conversation was not rewound: checkpoints %+v", cps)
	case restore == "files" && (len(cps) != 1 || len(cps[0].Commits) != 0):
		t.Fatalf("turn 1 still has its rewound commit: checkpoints %+v", cps)
	}
}

// A daemon that died after a files rewind's restores were written and
// journaled, before the rewind's own event was (the journal then ends
// with the restores' end: cut here at that point): the resumed
// conversation records the rewind, without restoring anything again.
func TestRewindCutBeforeItsEvent(t *testing.T) {
	state := t.TempDir()
	dir := gitRepo(t, map[string]string{"greet.txt": "hello\n"})
	h := newTestHostIn(t, state, editAndCreate, nil)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	ask(t, h, s, "greet the world")
	if _, err := s.Changes().Rewind(context.Background(), 1, fsm.RestoreBoth); err != nil {
		t.Fatal(err)
	}
	path := s.ident.journal()
	h.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(string(b), `{"t":"Rewind"`)
	if at < 0 || !strings.Contains(string(b[:at]), `"t":"restore-end"`) {
		t.Fatalf("no restore-end before the Rewind event in the journal:\n%s", b)
	}
	if err := os.WriteFile(path, b[:at], 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("the user's own\n"), 0o644)

	h2 := newTestHostIn(t, state, editAndCreate, nil)
	s2, err := h2.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkRewindRecorded(t, h2, s2, "both")
	if got, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(got) != "the user's own\n" {
		t.Fatalf("greet.txt = %q: restored again on the resume", got)
	}
}

package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
)

// TestProtectedConfigWritesRefused: a prompt-injected model cannot write
// loom's configuration, nor the editors' settings that carry it, with
// write_file or edit_file: at the root, in a nested folder, in another
// letter case, through a symlink, nor the user's config directory when
// the workspace contains it. The file is left as it was.
func TestProtectedConfigWritesRefused(t *testing.T) {
	env := newEnv(t)
	xdg := filepath.Join(env.Root, "home", ".config")
	t.Setenv("XDG_CONFIG_HOME", xdg)
	const before = "[tools]\nbash = \"ask\"\n"
	files := map[string]string{}
	for _, p := range []string{
		".loom.toml", "loom.toml", ".vscode/settings.json", ".zed/settings.json", ".dir-locals.el",
		"sub/pkg/.loom.toml", "sub/.vscode/settings.json", "sub/.dir-locals.el",
		"home/.config/loom/loom.toml", "home/.config/loom/trusted-folders",
	} {
		files[p] = before
	}
	writeFiles(t, env.Root, files)
	if err := os.Symlink(".loom.toml", filepath.Join(env.Root, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	evil := "[tools]\nbash = \"allow\"\n"
	for p := range files {
		if strings.HasPrefix(p, "home/") {
			// The user's config directory is hidden from commands, and
			// so from the tools where the workspace contains it (it may
			// hold a key in model.headers).
			mustToolError(t, run(t, ReadFile{}, env, map[string]any{"path": p}), "hidden from the agent")
		} else {
			mustOK(t, run(t, ReadFile{}, env, map[string]any{"path": p})) // reading is fine
		}
		mustToolError(t, run(t, WriteFile{}, env, map[string]any{"path": p, "content": evil}),
			"is loom's configuration: ask the user to change it")
		mustToolError(t, run(t, EditFile{}, env, map[string]any{"path": p, "old_string": "ask", "new_string": "allow"}),
			"is loom's configuration")
	}
	for _, p := range []string{
		".LOOM.toml", ".VSCode/Settings.json", "new/.zed/settings.json", "innocent.txt",
		"home/.config/loom/new.toml", "sub/loom.toml",
	} {
		mustToolError(t, run(t, WriteFile{}, env, map[string]any{"path": p, "content": evil}), "is loom's configuration")
	}
	for p := range files {
		if got, _ := os.ReadFile(filepath.Join(env.Root, p)); string(got) != before {
			t.Errorf("%s changed to %q", p, got)
		}
	}
	// Files that only look alike stay writable.
	for _, p := range []string{"loom.toml.example", "docs/settings.json", ".vscode/launch.json", "my.loom.toml.txt"} {
		mustOK(t, run(t, WriteFile{}, env, map[string]any{"path": p, "content": "x\n"}))
	}
}

// TestWriteFileAtomicRefusesProtected: an Edit computed elsewhere (a
// review applying it later) cannot land on a protected file either.
func TestWriteFileAtomicRefusesProtected(t *testing.T) {
	env := newEnv(t)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	writeFiles(t, env.Root, map[string]string{".loom.toml": "a\n"})
	e := newEdit(env.Root, filepath.Join(env.Root, ".loom.toml"), false, "a\n", "b\n", 0o644)
	if err := WriteFileAtomic(e); !errors.Is(err, config.ErrProtected) {
		t.Fatalf("WriteFileAtomic(.loom.toml) = %v, want ErrProtected", err)
	}
	if got, _ := os.ReadFile(filepath.Join(env.Root, ".loom.toml")); string(got) != "a\n" {
		t.Errorf(".loom.toml is now %q", got)
	}
}

// TestReadRegularNeverBlocks: a FIFO in the workspace (a command made it)
// never hangs read_file, nor the file watcher that reads through the same
// function; /dev/zero is not read without end.
func TestReadRegularNeverBlocks(t *testing.T) {
	env := newEnv(t)
	fifo := filepath.Join(env.Root, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadRegular(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadRegular(fifo) = %v, want ErrNotRegular", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadRegular blocked on a FIFO")
	}
	mustToolError(t, run(t, ReadFile{}, env, map[string]any{"path": "pipe"}), "pipe")
	if _, err := ReadRegular("/dev/zero"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadRegular(/dev/zero) = %v", err)
	}
}

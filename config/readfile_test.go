package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoaderReadsRegularFilesOnly: a cloned repository's .loom.toml that
// is a symlink to /dev/zero (which grew the daemon to 2 GB), to
// /dev/stdin (which hung it), a FIFO nobody writes, a 2 MB file, or a
// link out of the folder, is refused at once with an error naming the
// file, and Load returns (it never blocks or reads without end).
func TestLoaderReadsRegularFilesOnly(t *testing.T) {
	xdg := isolate(t)
	outside := write(t, t.TempDir(), "secret.toml", "[model]\nname = \"x\"\n")
	write(t, xdg, "loom/shared.toml", "[model]\nname = \"from-config-dir\"\n")
	for _, tc := range []struct {
		name string
		make func(t *testing.T, p string)
		want string // in the error; "" = no error
	}{
		{"dev zero", link("/dev/zero"), "a symlink to /dev/zero, outside"},
		{"dev stdin", link("/dev/stdin"), "not read"},
		{"dev null", link("/dev/null"), "outside"},
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("mkfifo:", err)
			}
		}, "a FIFO"},
		{"2 MB", func(t *testing.T, p string) {
			os.WriteFile(p, []byte("# "+strings.Repeat("x", 2<<20)+"\n"), 0o644)
		}, "larger than 1024 KiB"},
		{"directory", func(t *testing.T, p string) { os.Mkdir(p, 0o755) }, "a directory"},
		{"link outside", link(outside), "outside"},
		{"dangling link", link("/nonexistent/loom.toml"), "a symlink to /nonexistent/loom.toml, which is not a file"},
		{"link to the config dir", link(filepath.Join(xdg, "loom/shared.toml")), ""},
		{"link inside", func(t *testing.T, p string) {
			write(t, filepath.Dir(p), "conf/real.toml", "[model]\nname = \"inside\"\n")
			os.Symlink("conf/real.toml", p)
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, ".loom.toml")
			tc.make(t, p)
			done := make(chan error, 1)
			go func() {
				_, _, err := Load(LoadOptions{Folder: dir})
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Load did not return within 10 s")
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), p+": ") {
				t.Fatalf("Load error %v, want %q about %s", err, tc.want, p)
			}
		})
	}
}

// TestUserFileDeviceRefused: the user's own file may link anywhere (a
// dotfiles repository), but never to a device.
func TestUserFileDeviceRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "loom.toml")
	os.Symlink("/dev/zero", p)
	if _, _, err := Load(LoadOptions{UserFile: p}); err == nil || !strings.Contains(err.Error(), p+": is a device (/dev/zero)") {
		t.Fatalf("Load(user file -> /dev/zero) = %v", err)
	}
	dotfiles := write(t, t.TempDir(), "dotfiles/loom.toml", "[model]\nname = \"mine\"\n")
	os.Remove(p)
	os.Symlink(dotfiles, p)
	if c, _, err := Load(LoadOptions{UserFile: p}); err != nil || c.Model.Name != "mine" {
		t.Fatalf("Load(user file -> dotfiles) = %v, %q", err, c.Model.Name)
	}
}

// TestTrustFileReadSafely: the trust file obeys the same rules.
func TestTrustFileReadSafely(t *testing.T) {
	p := filepath.Join(t.TempDir(), "trusted-folders")
	os.Symlink("/dev/zero", p)
	if _, err := ReadTrustFile(p); err == nil || !strings.Contains(err.Error(), "a device") {
		t.Fatalf("ReadTrustFile(-> /dev/zero) = %v", err)
	}
}

func link(target string) func(t *testing.T, p string) {
	return func(t *testing.T, p string) {
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
}

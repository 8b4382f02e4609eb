package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// MaxFileSize bounds every file the loader reads (configuration and trust
// files): a real loom.toml is a few hundred bytes.
const MaxFileSize = 1 << 20

// readLimited reads the file at path as the loader may: after its symlinks
// are resolved, a regular file (never a FIFO, a device, a socket or a
// directory, which could block the daemon or feed it forever) of at most
// MaxFileSize bytes. When within is not empty, the resolved file must lie
// inside one of those directories (a repository's .loom.toml that links
// to ~/.ssh/config or /proc/self/environ is not read). A missing file
// gives an error wrapping fs.ErrNotExist; other errors are *Error naming
// path.
func readLimited(path string, within []string) ([]byte, error) {
	if _, err := os.Lstat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, &Error{Source: path, Msg: readErrMsg(err)}
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			target, _ := os.Readlink(path)
			return nil, &Error{Source: path, Msg: fmt.Sprintf("a symlink to %s, which is not a file: not read", target)}
		}
		return nil, &Error{Source: path, Msg: readErrMsg(err)}
	}
	if len(within) > 0 && !insideAny(real, within) {
		return nil, &Error{Source: path, Msg: fmt.Sprintf("a symlink to %s, outside %s: not read (a configuration file must stay inside the folder or your configuration directory)",
			real, strings.Join(within, " and "))}
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, &Error{Source: path, Msg: readErrMsg(err)}
	}
	if err := checkRegular(path, real, st); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should a FIFO replace the file between the Stat and
	// here, the open does not wait for a writer; the Stat of the open file
	// then refuses it. O_NOFOLLOW: the path was resolved already.
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &Error{Source: path, Msg: readErrMsg(err)}
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, &Error{Source: path, Msg: readErrMsg(err)}
	}
	if err := checkRegular(path, real, st); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, &Error{Source: path, Msg: readErrMsg(err)}
	}
	if len(data) > MaxFileSize {
		return nil, tooBig(path)
	}
	return data, nil
}

// checkRegular refuses anything but a regular file of at most
// MaxFileSize bytes.
func checkRegular(path, real string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		what := "not a regular file"
		switch m := st.Mode(); {
		case m.IsDir():
			what = "a directory"
		case m&fs.ModeNamedPipe != 0:
			what = "a FIFO (named pipe)"
		case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
			what = "a device"
		case m&fs.ModeSocket != 0:
			what = "a socket"
		}
		if real != path {
			what += " (" + real + ")"
		}
		return &Error{Source: path, Msg: "is " + what + ", not a regular file: not read"}
	}
	if st.Size() > MaxFileSize {
		return tooBig(path)
	}
	return nil
}

func tooBig(path string) *Error {
	return &Error{Source: path, Msg: fmt.Sprintf("larger than %d KiB: not read (a configuration file is a few lines)", MaxFileSize>>10)}
}

// insideAny reports whether the resolved path p lies inside one of dirs
// (symlinks of dirs resolved too).
func insideAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		for _, r := range []string{filepath.Clean(d), resolvePath(d)} {
			if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, string(filepath.Separator))+string(filepath.Separator)) {
				return true
			}
		}
	}
	return false
}

package worktree

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/loom-lsp/loom-lsp/config"
)

// Errors of a write; each is wrapped with the file's path.
var (
	// ErrChanged is a file whose content is not the one the change was
	// computed from (the user saved meanwhile, a command changed it, it
	// appeared or disappeared): it is left as it is.
	ErrChanged = errors.New("changed since loom read it; left as it is")
	// ErrSymlink is a symbolic link where the file or a directory above
	// it was expected.
	ErrSymlink = errors.New("is a symbolic link; loom does not write through links")
	// ErrOutside is a path that does not stay beneath the folder, or is
	// not a plain relative path.
	ErrOutside = errors.New("is not a path beneath the folder")
	// ErrGitDir is a path in a .git directory.
	ErrGitDir = errors.New("is inside a .git directory, which loom never writes")
	// ErrNotFile is a directory or special file where a regular file was
	// expected.
	ErrNotFile = errors.New("is not a regular file")
)

// Version is one side of a file: its bytes, or absent.
type Version struct {
	Text    string
	Present bool
}

// Text returns the version holding text.
func Text(text string) Version { return Version{Text: text, Present: true} }

// Absent is the version of a file that does not exist.
var Absent = Version{}

// Change is one file to write, restore or delete.
type Change struct {
	// Rel is the file's path relative to the writer's root,
	// slash-separated.
	Rel string
	// Expect is what the file must hold just before the write (Absent:
	// it must not exist).
	Expect Version
	// New is what it holds afterwards (Absent: it is deleted).
	New Version
	// Mode is the permission of a file the change creates (0 gives
	// 0644); an existing file keeps its own.
	Mode fs.FileMode
}

// Writer writes the files beneath one root.
type Writer struct {
	root string
	// Record, when set, is told of each write just before its rename:
	// the file's absolute path and new content (nil, present false, for a
	// deletion).
	Record func(abs string, content []byte, present bool)
}

// New returns the writer of the files beneath root (an absolute
// directory; it may be reached through a symbolic link).
func New(root string) *Writer { return &Writer{root: filepath.Clean(root)} }

// Root returns the writer's root.
func (w *Writer) Root() string { return w.root }

// Abs returns rel's absolute path (not resolved).
func (w *Writer) Abs(rel string) string { return filepath.Join(w.root, filepath.FromSlash(rel)) }

// Rel returns abs relative to the root, slash-separated, or an error
// wrapping ErrOutside.
func (w *Writer) Rel(abs string) (string, error) {
	rel, err := filepath.Rel(w.root, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s %w", abs, ErrOutside)
	}
	return filepath.ToSlash(rel), nil
}

// Refused returns why rel may not be written, nil when it may: a path
// that is not local, one in a .git directory, or a protected name
// (config.CheckProtected, the list the tools and the sandbox share).
func (w *Writer) Refused(rel string) error {
	if rel == "" || strings.ContainsRune(rel, 0) || strings.Contains(rel, "\\") || !filepath.IsLocal(filepath.FromSlash(rel)) || path.Clean(rel) != rel {
		return fmt.Errorf("%q %w", rel, ErrOutside)
	}
	for _, el := range strings.Split(rel, "/") {
		if strings.EqualFold(el, ".git") {
			return fmt.Errorf("%s %w", rel, ErrGitDir)
		}
	}
	return config.CheckProtected(w.root, w.Abs(rel))
}

// Read returns rel's content as it is now, without following a link
// anywhere on its path, and its permission bits.
func (w *Writer) Read(rel string) (Version, fs.FileMode, error) {
	if err := w.Refused(rel); err != nil && !errors.Is(err, config.ErrProtected) {
		return Absent, 0, err
	}
	dir, name := path.Split(rel)
	root, err := openRoot(w.root)
	if err != nil {
		return Absent, 0, err
	}
	defer unix.Close(root)
	d, err := openDir(root, strings.TrimSuffix(dir, "/"), false)
	if errors.Is(err, fs.ErrNotExist) {
		return Absent, 0, nil
	}
	if err != nil {
		return Absent, 0, fmt.Errorf("%s: %w", rel, err)
	}
	defer unix.Close(d)
	v, mode, err := readAt(d, name)
	if err != nil {
		return Absent, 0, fmt.Errorf("%s: %w", rel, err)
	}
	return v, mode, nil
}

// Write applies c: it checks the path, opens its directory beneath the
// root (creating missing ones when c writes a file), compares the file
// with c.Expect and, when equal, puts c.New in its place atomically. A
// file that already holds c.New is left as it is. An error wrapping
// ErrChanged leaves the file as it was found (the user's version on
// disk).
func (w *Writer) Write(c Change) error { return w.WriteAll([]Change{c})[0] }

// WriteAll applies each of cs as Write does, independently, and returns
// their errors (nil for those applied). The new texts go to temporary
// files first and are made durable together (their fsyncs run at once,
// so that the file system commits them in one go); then each file is
// compared with what it should hold and renamed, in turn.
func (w *Writer) WriteAll(cs []Change) []error {
	errs := make([]error, len(cs))
	root, err := openRoot(w.root)
	if err != nil {
		for i, c := range cs {
			errs[i] = fmt.Errorf("write %s: %w", c.Rel, err)
		}
		return errs
	}
	defer unix.Close(root)
	ps := make([]pending, len(cs))
	for i, c := range cs {
		ps[i] = pending{c: c, d: -1, tmpfd: -1}
		errs[i] = w.prepare(root, &ps[i])
	}
	syncTemps(ps, errs)
	for i := range ps {
		p := &ps[i]
		if errs[i] == nil && p.active {
			errs[i] = w.finish(p)
		}
		if errs[i] != nil && p.tmp != "" {
			unix.Unlinkat(p.d, p.tmp, 0)
		}
		if p.d >= 0 {
			unix.Close(p.d)
		}
		if errs[i] != nil {
			errs[i] = fmt.Errorf("write %s: %w", cs[i].Rel, errs[i])
		}
	}
	return errs
}

// pending is a change being written.
type pending struct {
	c Change
	// d is the file's directory; name its name in it; tmp the temporary
	// file holding the new text ("" for a deletion), tmpfd its descriptor
	// until it is durable.
	d         int
	name, tmp string
	tmpfd     int
	// active is set when the change is to be made (not already made).
	active bool
}

// prepare checks p's path, opens its directory, compares the file with
// what p expects, and writes the new text to a temporary file.
func (w *Writer) prepare(root int, p *pending) error {
	c := p.c
	if err := w.Refused(c.Rel); err != nil {
		return err
	}
	dir, name := path.Split(c.Rel)
	d, err := openDir(root, strings.TrimSuffix(dir, "/"), c.New.Present)
	if errors.Is(err, fs.ErrNotExist) && !c.New.Present {
		if c.Expect.Present {
			return fmt.Errorf("%w (it was deleted)", ErrChanged)
		}
		return nil
	}
	if err != nil {
		return err
	}
	p.d, p.name = d, name
	cur, mode, err := readAt(d, name)
	switch {
	case err != nil:
		return err
	case cur == c.New:
		return nil
	case !same(cur, c.Expect):
		return changed(cur)
	}
	p.active = true
	if !c.New.Present {
		return nil
	}
	perm := c.Mode.Perm()
	if cur.Present {
		perm = mode
	} else if perm == 0 {
		perm = 0o644
	}
	p.tmp, p.tmpfd, err = writeTemp(d, name, c.New.Text, perm)
	return err
}

// syncTemps makes the temporary files durable and closes them: several
// with one syncfs(2) of their file system where there is one, else their
// fsyncs at once; a failure is the file's error.
func syncTemps(ps []pending, errs []error) {
	if len(ps) > 1 {
		var fd = -1
		for i := range ps {
			if ps[i].tmpfd >= 0 {
				fd = ps[i].tmpfd
			}
		}
		if fd >= 0 && syncFS(fd) == nil {
			for i := range ps {
				if ps[i].tmpfd >= 0 {
					unix.Close(ps[i].tmpfd)
					ps[i].tmpfd = -1
				}
			}
			return
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range ps {
		if ps[i].tmpfd < 0 {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			err := unix.Fsync(ps[i].tmpfd)
			if cerr := unix.Close(ps[i].tmpfd); err == nil {
				err = cerr
			}
			ps[i].tmpfd = -1
			if err != nil && errs[i] == nil {
				errs[i] = err
			}
		}(i)
	}
	wg.Wait()
}

// finish renames p's temporary file over its file, or removes the file,
// when the file still holds what p expects.
func (w *Writer) finish(p *pending) error {
	if w.Record != nil {
		w.Record(w.Abs(p.c.Rel), []byte(p.c.New.Text), p.c.New.Present)
	}
	if !p.c.New.Present {
		return w.remove(p.d, p.name, p.c)
	}
	if beforeRename != nil {
		beforeRename()
	}
	if err := replace(p.d, p.tmp, p.name, p.c.Expect); err != nil {
		return err
	}
	p.tmp = ""
	return nil
}

// remove deletes name (in d) when it still holds c.Expect: it is renamed
// aside first, then checked, then unlinked, or put back when it changed.
func (w *Writer) remove(d int, name string, c Change) error {
	aside := tempName(name)
	if beforeRename != nil {
		beforeRename()
	}
	if err := unix.Renameat(d, name, d, aside); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("%w (it was deleted)", ErrChanged)
		}
		return err
	}
	old, _, err := readAt(d, aside)
	if err == nil && same(old, c.Expect) {
		return unix.Unlinkat(d, aside, 0)
	}
	if perr := putBack(d, aside, name); perr != nil {
		return fmt.Errorf("%w; it is kept as %s", ErrChanged, aside)
	}
	if err != nil {
		return err
	}
	return changed(old)
}

// putBack renames aside back to name, unless name exists again.
func putBack(d int, aside, name string) error {
	err := renameNoReplace(d, aside, name)
	if !errors.Is(err, errNoAtomic) {
		return err
	}
	if cur, _, err := readAt(d, name); err != nil || cur.Present {
		return unix.EEXIST
	}
	return unix.Renameat(d, aside, d, name)
}

// replace puts the temporary file tmp in name's place when name holds
// expect; otherwise name is left (or put back) as it was.
func replace(d int, tmp, name string, expect Version) error {
	if !expect.Present {
		err := renameNoReplace(d, tmp, name)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EEXIST):
			return fmt.Errorf("%w (it now exists)", ErrChanged)
		case !errors.Is(err, errNoAtomic):
			return err
		}
		// No atomic create here: look again, just before the rename.
		if cur, _, err := readAt(d, name); err != nil || cur.Present {
			return fmt.Errorf("%w (it now exists)", ErrChanged)
		}
		return unix.Renameat(d, tmp, d, name)
	}
	err := exchange(d, tmp, name)
	if errors.Is(err, errNoAtomic) {
		// No exchange on this file system: compare again, just before
		// the rename.
		cur, _, err := readAt(d, name)
		if err != nil {
			return err
		}
		if !same(cur, expect) {
			return changed(cur)
		}
		return unix.Renameat(d, tmp, d, name)
	}
	if errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("%w (it was deleted)", ErrChanged)
	}
	if err != nil {
		return err
	}
	// tmp now names the replaced file: it must be what was expected.
	old, _, rerr := readAt(d, tmp)
	if rerr == nil && same(old, expect) {
		unix.Unlinkat(d, tmp, 0)
		return nil
	}
	if xerr := exchange(d, tmp, name); xerr != nil {
		return fmt.Errorf("%w; your version is kept as %s", ErrChanged, tmp)
	}
	unix.Unlinkat(d, tmp, 0) // loom's text, swapped back out
	if rerr != nil {
		return rerr
	}
	return changed(old)
}

// changed is the error for a file found as cur.
func changed(cur Version) error {
	if !cur.Present {
		return fmt.Errorf("%w (it was deleted)", ErrChanged)
	}
	return ErrChanged
}

func same(a, b Version) bool { return a.Present == b.Present && a.Text == b.Text }

// readAt reads name in d without following a link.
func readAt(d int, name string) (Version, fs.FileMode, error) {
	fd, err := unix.Openat(d, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return Absent, 0, nil
	case errors.Is(err, unix.ELOOP):
		return Absent, 0, ErrSymlink
	case err != nil:
		return Absent, 0, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Absent, 0, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return Absent, 0, ErrNotFile
	}
	buf := make([]byte, 0, st.Size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return Absent, 0, err
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	return Text(string(buf)), fs.FileMode(st.Mode) & fs.ModePerm, nil
}

// writeTemp writes text to a new temporary file beside name, with perm,
// and returns its name and its descriptor, still open for an fsync.
func writeTemp(d int, name, text string, perm fs.FileMode) (string, int, error) {
	tmp := tempName(name)
	fd, err := unix.Openat(d, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm))
	if err != nil {
		return "", -1, err
	}
	fail := func(err error) (string, int, error) {
		unix.Close(fd)
		unix.Unlinkat(d, tmp, 0)
		return "", -1, err
	}
	for b := []byte(text); len(b) > 0; {
		n, err := unix.Write(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fail(err)
		}
		b = b[n:]
	}
	if err := unix.Fchmod(fd, uint32(perm)); err != nil {
		return fail(err)
	}
	return tmp, fd, nil
}

// tempName is a fresh name beside name for loom's temporary files.
func tempName(name string) string {
	var b [6]byte
	rand.Read(b[:])
	if len(name) > 200 {
		name = name[:200]
	}
	return "." + name + ".loom-" + hex.EncodeToString(b[:])
}

// openRoot opens the root directory (following links in its own path:
// the folder may be reached through one).
func openRoot(root string) (int, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open the folder %s: %w", root, err)
	}
	return fd, nil
}

// walkDir opens dir (slash-separated, relative to root; "" is root
// itself) one component at a time, never following a link; with create,
// missing directories are made. The error wraps fs.ErrNotExist for a
// missing one without create, ErrSymlink for a link.
func walkDir(root int, dir string, create bool) (int, error) {
	fd, err := unix.Dup(root)
	if err != nil {
		return -1, err
	}
	if dir == "" {
		return fd, nil
	}
	done := ""
	for _, el := range strings.Split(dir, "/") {
		done = path.Join(done, el)
		next, err := unix.Openat(fd, el, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && create {
			if merr := unix.Mkdirat(fd, el, 0o755); merr != nil && !errors.Is(merr, unix.EEXIST) {
				unix.Close(fd)
				return -1, fmt.Errorf("create %s: %w", done, merr)
			}
			next, err = unix.Openat(fd, el, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		if err != nil {
			err = dirError(fd, el, done, err)
			unix.Close(fd)
			return -1, err
		}
		unix.Close(fd)
		fd = next
	}
	return fd, nil
}

// dirError explains why el (of d; done is its path) could not be opened
// as a directory.
func dirError(d int, el, done string, err error) error {
	var st unix.Stat_t
	if errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("%s: %w", done, fs.ErrNotExist)
	}
	if serr := unix.Fstatat(d, el, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil {
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return fmt.Errorf("%s %w (a directory was expected)", done, ErrSymlink)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return fmt.Errorf("%s is not a directory", done)
		}
	}
	return fmt.Errorf("%s: %w", done, err)
}

// beforeRename, set by tests, runs between the comparison and the rename,
// where another writer may act.
var beforeRename func()

// errNoAtomic is exchange's and renameNoReplace's answer where the
// system or file system cannot do it atomically.
var errNoAtomic = errors.New("no atomic exchange here")

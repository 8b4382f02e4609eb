package gitcommit

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// errIndexFormat says an index file cannot be read here (a split or
// sparse index, an unknown version); git is asked instead.
var errIndexFormat = errors.New("index format not read here")

// readIndex returns the stage-0 entries of the index file at path whose
// paths are in want (all of them when want is nil), as git's mode and
// object name. oidLen is the object names' length in hex (40 or 64).
// It reads versions 2 to 4, and refuses (errIndexFormat) a split index or
// a sparse one, whose entries are not all in the file.
func readIndex(path string, want map[string]bool, oidLen int) (map[string]treeEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	hashLen := oidLen / 2
	if len(b) < 12+hashLen || string(b[:4]) != "DIRC" {
		return nil, fmt.Errorf("%w: %s: no index header", errIndexFormat, path)
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("%w: version %d", errIndexFormat, version)
	}
	count := int(binary.BigEndian.Uint32(b[8:12]))
	out := map[string]treeEntry{}
	off := 12
	var prev []byte
	fixed := 40 + hashLen + 2
	for i := 0; i < count; i++ {
		if off+fixed > len(b) {
			return nil, fmt.Errorf("%w: truncated entry", errIndexFormat)
		}
		e := b[off:]
		mode := binary.BigEndian.Uint32(e[24:28])
		oid := e[40 : 40+hashLen]
		flags := binary.BigEndian.Uint16(e[40+hashLen:])
		stage := (flags >> 12) & 3
		n := fixed
		if flags&0x4000 != 0 {
			if version < 3 {
				return nil, fmt.Errorf("%w: extended flags in version 2", errIndexFormat)
			}
			n += 2
		}
		var name []byte
		if version == 4 {
			strip, used := varint(e[n:])
			if used == 0 || strip > len(prev) {
				return nil, fmt.Errorf("%w: bad path compression", errIndexFormat)
			}
			n += used
			end := bytes.IndexByte(e[n:], 0)
			if end < 0 {
				return nil, fmt.Errorf("%w: unterminated path", errIndexFormat)
			}
			name = append(append([]byte(nil), prev[:len(prev)-strip]...), e[n:n+end]...)
			n += end + 1
		} else {
			end := bytes.IndexByte(e[n:], 0)
			if end < 0 {
				return nil, fmt.Errorf("%w: unterminated path", errIndexFormat)
			}
			name = e[n : n+end]
			n = (n + end + 8) &^ 7
		}
		prev = name
		off += n
		if stage == 0 && (want == nil || want[string(name)]) {
			out[string(name)] = treeEntry{mode: fmt.Sprintf("%06o", mode), oid: hex.EncodeToString(oid)}
		}
	}
	// Extensions: a split index keeps entries elsewhere ("link"), a sparse
	// index has directory entries ("sdir").
	for off+8 <= len(b)-hashLen {
		sig := string(b[off : off+4])
		size := int(binary.BigEndian.Uint32(b[off+4 : off+8]))
		if sig == "link" || sig == "sdir" {
			return nil, fmt.Errorf("%w: %s extension", errIndexFormat, sig)
		}
		off += 8 + size
	}
	return out, nil
}

// varint decodes git's offset varint (index version 4) and returns the
// value and the bytes used, 0 on malformed input.
func varint(b []byte) (int, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	val := int(c & 127)
	i := 1
	for c&128 != 0 {
		if i >= len(b) || i > 8 {
			return 0, 0
		}
		c = b[i]
		i++
		val = ((val + 1) << 7) | int(c&127)
	}
	return val, i
}

// tmpIndex is a temporary index (GIT_INDEX_FILE) in which a commit's tree
// is built, never the user's.
type tmpIndex struct {
	path   string
	git    runner // with GIT_INDEX_FILE set
	oidLen int
}

// newIndex creates a temporary index in the git directory holding
// parent's tree (nothing on an unborn branch).
func (r *Repo) newIndex(ctx context.Context, parent string) (*tmpIndex, error) {
	f, err := os.CreateTemp(r.GitDir, "loom-index-")
	if err != nil {
		return nil, err
	}
	f.Close()
	os.Remove(f.Name()) // git creates it
	ix := &tmpIndex{path: f.Name(), git: r.git.withEnv("GIT_INDEX_FILE=" + f.Name()), oidLen: r.oidLen}
	if parent != "" {
		if _, err := ix.git.run(ctx, "", "read-tree", parent); err != nil {
			os.Remove(ix.path)
			return nil, err
		}
	}
	return ix, nil
}

// indexEntries reads the stage-0 entries of paths from the index file at
// file (in Go; by `git ls-files` for a format not read here). A missing
// file is an empty index.
func indexEntries(ctx context.Context, g runner, file string, paths []string, oidLen int) (map[string]treeEntry, error) {
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	out, err := readIndex(file, want, oidLen)
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, fs.ErrNotExist):
		return map[string]treeEntry{}, nil
	case !errors.Is(err, errIndexFormat):
		return nil, err
	}
	ls, err := g.run(ctx, "", append([]string{"ls-files", "-s", "-z", "--"}, literal(paths)...)...)
	if err != nil {
		return nil, err
	}
	out = map[string]treeEntry{}
	for _, rec := range NulFields(ls) {
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if ok && len(f) == 3 && f[2] == "0" {
			out[path] = treeEntry{mode: f[0], oid: f[1]}
		}
	}
	return out, nil
}

// writeBlobs writes the agent's contents into the object store and
// returns their entries. Files whose disk content is already the agent's
// text are hashed by git from the disk, all in one process (each blob is
// then checked to be exactly the agent's text); the others are hashed
// from the text.
func (r *Repo) writeBlobs(ctx context.Context, blobs []pendingBlob) ([]Entry, error) {
	stored := r.hashFromDisk(ctx, asOnDisk(r.Top, blobs))
	entries := make([]Entry, 0, len(blobs))
	for _, pb := range blobs {
		if e, ok := r.storedAsWritten(pb, stored); ok {
			entries = append(entries, e)
			continue
		}
		// Not hashed from the disk, or a filter made git store something
		// else: hash the agent's text.
		e, err := r.hashBlob(ctx, pb)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// asOnDisk names the blobs whose file on disk holds the agent's text: a
// command's file (fromDisk), or a regular file whose bytes are the text.
func asOnDisk(top string, blobs []pendingBlob) []string {
	var onDisk []string
	for _, pb := range blobs {
		if pb.remove || pb.link || strings.ContainsAny(pb.entry.Path, "\n\r") {
			continue
		}
		if !pb.fromDisk {
			abs := filepath.Join(top, filepath.FromSlash(pb.entry.Path))
			if st, err := os.Lstat(abs); err != nil || !st.Mode().IsRegular() || st.Size() != int64(len(pb.text)) {
				continue
			}
			if b, err := os.ReadFile(abs); err != nil || string(b) != pb.text {
				continue
			}
		}
		onDisk = append(onDisk, pb.entry.Path)
	}
	return onDisk
}

// hashFromDisk writes the files at paths into the object store, through
// their filters, in one git process, and returns each one's blob and the
// mode of the file on disk; nil when it could not (each file is then
// hashed from its text).
func (r *Repo) hashFromDisk(ctx context.Context, paths []string) map[string]treeEntry {
	if len(paths) == 0 {
		return nil
	}
	out, err := r.git.run(ctx, strings.Join(paths, "\n")+"\n", "hash-object", "-w", "--stdin-paths")
	oids := strings.Fields(out)
	if err != nil || len(oids) != len(paths) {
		return nil
	}
	got := make(map[string]treeEntry, len(paths))
	for i, p := range paths {
		st, err := os.Lstat(filepath.Join(r.Top, filepath.FromSlash(p)))
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		mode := "100644"
		if st.Mode()&0o111 != 0 {
			mode = "100755"
		}
		got[p] = treeEntry{mode: mode, oid: oids[i]}
	}
	return got
}

// storedAsWritten is pb's entry when git, hashing it from the disk,
// stored exactly the agent's text (a command's file: whatever the disk
// held, with the disk's executable bit).
func (r *Repo) storedAsWritten(pb pendingBlob, stored map[string]treeEntry) (Entry, bool) {
	e := pb.entry
	g, ok := stored[e.Path]
	switch {
	case !ok:
		return e, false
	case pb.fromDisk:
		e.Mode, e.Blob = g.mode, g.oid
		return e, true
	case g.oid == blobName(pb.text, r.oidLen):
		e.Blob = g.oid
		return e, true
	}
	return e, false
}

// hashBlob writes pb's content into the object store and returns its
// entry: a command's file hashed from the disk (its mode from the disk's
// executable bit), a symbolic link's target without filters, other text
// through the path's filters; a removal has no blob.
func (r *Repo) hashBlob(ctx context.Context, pb pendingBlob) (Entry, error) {
	e := pb.entry
	switch {
	case pb.remove:
	case pb.fromDisk:
		st, err := os.Lstat(filepath.Join(r.Top, filepath.FromSlash(e.Path)))
		if err != nil {
			return e, err
		}
		blob, err := r.git.run(ctx, "", "hash-object", "-w", "--", e.Path)
		if err != nil {
			return e, err
		}
		e.Mode, e.Blob = "100644", strings.TrimSpace(blob)
		if st.Mode()&0o111 != 0 {
			e.Mode = "100755"
		}
	default:
		args := []string{"hash-object", "-w", "--stdin", "--path=" + e.Path}
		if pb.link {
			args = []string{"hash-object", "-w", "--no-filters", "--stdin"}
		}
		blob, err := r.git.run(ctx, pb.text, args...)
		if err != nil {
			return e, err
		}
		e.Blob = strings.TrimSpace(blob)
	}
	return e, nil
}

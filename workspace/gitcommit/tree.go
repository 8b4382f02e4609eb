package gitcommit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
)

// errNoDirectTree says a commit's tree cannot be built from the parent's
// trees here (a path git's batch input cannot carry, a file where a
// directory goes or the reverse); it is built in a temporary index
// instead, where git itself decides.
var errNoDirectTree = errors.New("the tree is built in an index")

// treeItem is one entry of a tree object: its mode as the tree stores it
// ("100644", "40000"), its name and its object.
type treeItem struct{ mode, name, oid string }

// isTree says the entry is a directory.
func (t treeItem) isTree() bool { return t.mode == "40000" }

// parentTrees are the trees of a commit along some paths: each directory
// holding one of them, and their parents up to the root ("").
type parentTrees struct {
	commit string
	trees  map[string][]treeItem // by directory, slash-separated, "" the root; absent: no such directory
}

// dirsOf are the directories holding paths and all their parents, the
// root "" included.
func dirsOf(paths []string) []string {
	seen := map[string]bool{"": true}
	dirs := []string{""}
	for _, p := range paths {
		for d := path.Dir(p); d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	return dirs
}

// readTrees reads, in one git process, commit's trees along paths and
// returns them with the paths' entries in the commit (absent: none).
func (r *Repo) readTrees(ctx context.Context, commit string, paths []string) (*parentTrees, map[string]treeEntry, error) {
	pt := &parentTrees{commit: commit, trees: map[string][]treeItem{}}
	for _, p := range paths {
		if strings.ContainsAny(p, "\n\r") {
			return nil, nil, errNoDirectTree
		}
	}
	dirs := dirsOf(paths)
	if commit != "" {
		var in strings.Builder
		for _, d := range dirs {
			if d == "" {
				fmt.Fprintf(&in, "%s^{tree}\n", commit)
			} else {
				fmt.Fprintf(&in, "%s:%s\n", commit, d)
			}
		}
		out, err := r.git.run(ctx, in.String(), "cat-file", "--batch")
		if err != nil {
			return nil, nil, err
		}
		if err := pt.parse(out, dirs, r.oidLen); err != nil {
			return nil, nil, err
		}
	}
	base := map[string]treeEntry{}
	for _, p := range paths {
		for _, it := range pt.trees[dirKey(p)] {
			if it.name == path.Base(p) && !it.isTree() {
				base[p] = treeEntry{mode: it.mode, oid: it.oid}
			}
		}
	}
	return pt, base, nil
}

// dirKey is the directory of p as parentTrees keys it.
func dirKey(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// parse reads cat-file --batch output for dirs, in order: a missing
// object is a directory the commit does not have; anything but a tree
// where a directory goes cannot be built here.
func (pt *parentTrees) parse(out string, dirs []string, oidLen int) error {
	rd := bufio.NewReader(strings.NewReader(out))
	for _, d := range dirs {
		header, err := rd.ReadString('\n')
		if err != nil {
			return fmt.Errorf("cat-file --batch: %w", err)
		}
		f := strings.Fields(header)
		if len(f) == 2 && f[1] == "missing" {
			continue
		}
		if len(f) != 3 || f[1] != "tree" {
			return errNoDirectTree
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			return fmt.Errorf("cat-file --batch: %q", header)
		}
		body := make([]byte, size+1)
		if _, err := io.ReadFull(rd, body); err != nil {
			return fmt.Errorf("cat-file --batch: %w", err)
		}
		items, err := parseTree(body[:size], oidLen)
		if err != nil {
			return err
		}
		pt.trees[d] = items
	}
	return nil
}

// parseTree reads a tree object's content.
func parseTree(b []byte, oidLen int) ([]treeItem, error) {
	var items []treeItem
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		nul := bytes.IndexByte(b, 0)
		if sp < 0 || nul < sp || nul+1+oidLen/2 > len(b) {
			return nil, errors.New("cat-file --batch: malformed tree")
		}
		items = append(items, treeItem{mode: string(b[:sp]), name: string(b[sp+1 : nul]), oid: hex.EncodeToString(b[nul+1 : nul+1+oidLen/2])})
		b = b[nul+1+oidLen/2:]
	}
	return items, nil
}

// treeMode is a git mode as a tree stores it (no leading zero).
func treeMode(mode string) string { return strings.TrimLeft(mode, "0") }

// buildTree writes the tree of pt's commit with entries applied (one
// `git mktree --batch` for every directory that changed, deepest first)
// and returns the root tree's name. It returns errNoDirectTree when a
// file goes where a directory is, or the reverse.
func (r *Repo) buildTree(ctx context.Context, pt *parentTrees, entries []Entry) (string, error) {
	trees := map[string][]treeItem{}
	get := func(d string) []treeItem {
		if t, ok := trees[d]; ok {
			return t
		}
		t := append([]treeItem(nil), pt.trees[d]...)
		trees[d] = t
		return t
	}
	for _, e := range entries {
		d, name := dirKey(e.Path), path.Base(e.Path)
		items, err := setItem(get(d), name, treeItem{mode: treeMode(e.Mode), name: name, oid: e.Blob}, e.Blob == "")
		if err != nil {
			return "", err
		}
		trees[d] = items
	}
	// Deepest first: a directory's new name goes into its parent.
	for d := range trees {
		for p := d; p != ""; {
			p = dirKey(p)
			get(p)
		}
	}
	dirs := deepestFirst(trees)
	var in strings.Builder
	var want []string
	for _, d := range dirs {
		items := trees[d]
		if d != "" {
			name := path.Base(d)
			var item treeItem
			if len(items) > 0 {
				item = treeItem{mode: "40000", name: name, oid: r.treeName(items)}
			}
			parent, err := setItem(get(dirKey(d)), name, item, len(items) == 0)
			if err != nil {
				return "", err
			}
			trees[dirKey(d)] = parent
			if len(items) == 0 {
				continue // an emptied directory is no tree
			}
		}
		writeMktree(&in, items)
		want = append(want, r.treeName(items))
	}
	// --missing: the objects exist (the parent's, the blobs just written,
	// the trees before in the batch), and a submodule's commit is not here.
	out, err := r.git.run(ctx, in.String(), "mktree", "--missing", "--batch")
	if err != nil {
		return "", err
	}
	if got := strings.Fields(out); len(got) != len(want) || !equal(got, want) {
		// A tree git writes otherwise (an old mode it normalises): let
		// git build it from an index.
		return "", fmt.Errorf("%w: git mktree wrote %v, expected %v", errNoDirectTree, got, want)
	}
	return want[len(want)-1], nil
}

// deepestFirst are the directories of trees, the deepest first.
func deepestFirst(trees map[string][]treeItem) []string {
	depth := func(d string) int {
		if d == "" {
			return 0
		}
		return strings.Count(d, "/") + 1
	}
	dirs := make([]string, 0, len(trees))
	for d := range trees {
		dirs = append(dirs, d)
	}
	sort.Slice(dirs, func(i, j int) bool { return depth(dirs[i]) > depth(dirs[j]) })
	return dirs
}

// writeMktree writes a tree of items as `git mktree --batch` reads it.
func writeMktree(in *strings.Builder, items []treeItem) {
	for _, it := range items {
		kind := "blob"
		switch it.mode {
		case "40000":
			kind = "tree"
		case "160000":
			kind = "commit"
		}
		fmt.Fprintf(in, "%s %s %s\t%s\n", it.mode, kind, it.oid, it.name)
	}
	in.WriteString("\n")
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// setItem puts item under name into items (remove: takes name out). A
// directory where a file goes, or a file where a directory goes, cannot
// be built here.
func setItem(items []treeItem, name string, item treeItem, remove bool) ([]treeItem, error) {
	for i, it := range items {
		if it.name != name {
			continue
		}
		if it.isTree() != item.isTree() && !remove {
			return nil, errNoDirectTree
		}
		if remove {
			return append(items[:i:i], items[i+1:]...), nil
		}
		items[i] = item
		return items, nil
	}
	if remove {
		return items, nil
	}
	return append(items, item), nil
}

// treeName is the object name of a tree of items, as git writes it:
// sorted by name, a directory's name compared as if it ended with "/".
func (r *Repo) treeName(items []treeItem) string {
	sorted := append([]treeItem(nil), items...)
	key := func(t treeItem) string {
		if t.isTree() {
			return t.name + "/"
		}
		return t.name
	}
	sort.Slice(sorted, func(i, j int) bool { return key(sorted[i]) < key(sorted[j]) })
	var body bytes.Buffer
	for _, it := range sorted {
		raw, _ := hex.DecodeString(it.oid)
		body.WriteString(it.mode + " " + it.name + "\x00")
		body.Write(raw)
	}
	header := "tree " + strconv.Itoa(body.Len()) + "\x00"
	if r.oidLen == 64 {
		h := sha256.Sum256(append([]byte(header), body.Bytes()...))
		return hex.EncodeToString(h[:])
	}
	h := sha1.Sum(append([]byte(header), body.Bytes()...))
	return hex.EncodeToString(h[:])
}

package gitcommit

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Step is one edit an agent's tool made to a file: Old was the file's
// whole text (as the tool saw it: the editor's buffer or the disk), New
// the text it wrote.
type Step struct{ Old, New string }

// Change is what the agent's tools did to one file during a batch.
type Change struct {
	// Path is the file's absolute, resolved path.
	Path string
	// Steps are the edit tools' edits, in order. Empty with FromDisk.
	Steps []Step
	// Created is set when the first step created the file.
	Created bool
	// Mode is the file's permission bits (for a new file's executable bit).
	Mode fs.FileMode
	// FromDisk says the file as it is on disk now is the agent's own (a
	// command the agent ran wrote it, and nobody else touched it); a
	// missing file was deleted.
	FromDisk bool
}

// Entry is one path of a planned commit.
type Entry struct {
	// Path is relative to the worktree's root, slash-separated.
	Path string `json:"path"`
	// Mode is git's mode ("100644", "100755", "120000"); "" removes the
	// path.
	Mode string `json:"mode,omitempty"`
	// Blob is the content's object, already written; "" removes the path.
	Blob string `json:"blob,omitempty"`
	// BaseMode and Base are the path's mode and object in the parent, ""
	// when it is absent there.
	BaseMode string `json:"baseMode,omitempty"`
	Base     string `json:"base,omitempty"`
}

// Skipped is a file of the batch left out of the commit, and why, in
// words for the user.
type Skipped struct {
	Path   string
	Reason string
}

// Plan is a commit ready to be made: what Prepare decided. It is plain
// data (JSON), so that a commit interrupted by a crash can be made later.
type Plan struct {
	// Top is the worktree's root.
	Top string `json:"top"`
	// Parent is the commit the plan is on top of, "" on an unborn branch.
	Parent  string  `json:"parent,omitempty"`
	Entries []Entry `json:"entries"`
	Message string  `json:"message"`
	// Skipped are the files left out; not journaled.
	Skipped []Skipped `json:"-"`
	// index is the temporary index Commit builds when a hook must see
	// one (or the tree cannot be built from trees); Commit or Discard
	// removes it.
	index string
	// trees are the parent's trees along the entries' paths, read by
	// Prepare; nil when Commit must read them (or build the tree in an
	// index).
	trees *parentTrees
}

// Discard removes what Prepare or Commit left; Commit does it itself.
func (p *Plan) Discard() {
	if p.index != "" {
		os.Remove(p.index)
		p.index = ""
	}
	p.trees = nil
}

// Files returns the plan's paths.
func (p *Plan) Files() []string {
	out := make([]string, len(p.Entries))
	for i, e := range p.Entries {
		out[i] = e.Path
	}
	return out
}

// Prepare decides what the agent's commit holds: for each change, the
// agent's text on top of the parent's version of the file, written as a
// blob. Files it cannot commit without the user's bytes, or must not
// commit (a submodule's, an ignored one, one outside the worktree), are
// listed in Plan.Skipped. message(files) gives the commit message for the
// files kept. It returns an error wrapping ErrInProgress during a merge,
// rebase, etc.
func (r *Repo) Prepare(ctx context.Context, changes []Change, message func(files []string) string) (*Plan, error) {
	if err := r.checkState(); err != nil {
		return nil, err
	}
	plan := &Plan{Top: r.Top, Parent: r.Head}
	items := r.committable(changes, plan)
	if len(items) == 0 {
		return plan, nil
	}
	rels := make([]string, len(items))
	for i, it := range items {
		rels[i] = it.rel
	}
	trees, parent, err := r.readTrees(ctx, r.Head, rels)
	if errors.Is(err, errNoDirectTree) {
		trees = nil
		parent, err = r.treeFiles(ctx, r.Head, rels)
	}
	if err != nil {
		return nil, err
	}
	blobs, err := r.blobsFor(ctx, parent, items, plan)
	if err != nil {
		return nil, err
	}
	entries, err := r.writeBlobs(ctx, blobs)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Mode != e.BaseMode || e.Blob != e.Base {
			// else the agent's change leaves the file as the parent has it
			plan.Entries = append(plan.Entries, e)
		}
	}
	if len(plan.Entries) > 0 {
		plan.Message = message(plan.Files())
		plan.trees = trees
	}
	return plan, nil
}

// treeFiles is treeEntries without directories: the paths' files in
// commit.
func (r *Repo) treeFiles(ctx context.Context, commit string, paths []string) (map[string]treeEntry, error) {
	out, err := r.treeEntries(ctx, commit, paths)
	for p, e := range out {
		if e.mode == "040000" {
			delete(out, p)
		}
	}
	return out, err
}

// changeAt is a change with its path relative to the repository's top.
type changeAt struct {
	rel string
	c   Change
}

// committable is the changes this repository may commit, by path; the
// others (outside it, inside .git, in a submodule or nested repository)
// are listed in plan.Skipped.
func (r *Repo) committable(changes []Change, plan *Plan) []changeAt {
	var items []changeAt
	for _, c := range changes {
		rel, ok := r.Rel(c.Path)
		switch {
		case !ok:
			plan.Skipped = append(plan.Skipped, Skipped{c.Path, "it is outside the repository " + r.Top})
		case rel == ".git" || strings.HasPrefix(rel, ".git/") || strings.Contains(rel, "/.git/"):
			plan.Skipped = append(plan.Skipped, Skipped{rel, "it is inside .git"})
		default:
			if sub := r.nestedRepo(rel); sub != "" {
				plan.Skipped = append(plan.Skipped, Skipped{rel, "it belongs to the submodule or nested repository " + sub + " (commit it there with git)"})
				continue
			}
			items = append(items, changeAt{rel, c})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].rel < items[j].rel })
	return items
}

// blobsFor is the agent's content of each item on top of its version in
// the parent's tree (parent); a file git ignores, a submodule, or
// one that cannot be committed without the user's bytes (or is too big)
// is listed in plan.Skipped instead.
func (r *Repo) blobsFor(ctx context.Context, parent map[string]treeEntry, items []changeAt, plan *Plan) ([]pendingBlob, error) {
	rels := make([]string, len(items))
	for i, it := range items {
		rels[i] = it.rel
	}
	ignored, err := r.ignored(ctx, rels, parent)
	if err != nil {
		return nil, err
	}
	var blobs []pendingBlob
	for _, it := range items {
		base := parent[it.rel]
		var reason string
		switch {
		case ignored[it.rel]:
			reason = "git ignores it"
		case base.mode == "160000":
			reason = "it is a submodule"
		default:
			pb, why, err := r.contentFor(ctx, it.rel, it.c, base)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", it.rel, err)
			}
			if reason = why; reason == "" {
				reason = r.tooBig(pb)
			}
			if reason == "" {
				blobs = append(blobs, pb)
				continue
			}
		}
		plan.Skipped = append(plan.Skipped, Skipped{it.rel, reason})
	}
	return blobs, nil
}

// treeEntry is a path's mode and object in a tree.
type treeEntry struct{ mode, oid string }

// treeEntries lists paths in commit's tree; an absent path has no entry.
func (r *Repo) treeEntries(ctx context.Context, commit string, paths []string) (map[string]treeEntry, error) {
	out := map[string]treeEntry{}
	if commit == "" {
		return out, nil
	}
	ls, err := r.git.run(ctx, "", append([]string{"ls-tree", "-z", "--full-tree", commit, "--"}, literal(paths)...)...)
	if err != nil {
		return nil, err
	}
	for _, rec := range NulFields(ls) {
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if ok && len(f) == 3 {
			out[path] = treeEntry{mode: f[0], oid: f[2]}
		}
	}
	return out, nil
}

// ignored returns which of paths, absent from the parent, git ignores.
func (r *Repo) ignored(ctx context.Context, paths []string, parent map[string]treeEntry) (map[string]bool, error) {
	var check []string
	for _, p := range paths {
		if _, tracked := parent[p]; !tracked {
			check = append(check, p)
		}
	}
	out := map[string]bool{}
	if len(check) == 0 {
		return out, nil
	}
	ls, err := r.git.run(ctx, "", append([]string{"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--"}, literal(check)...)...)
	if err != nil {
		return nil, err
	}
	for _, p := range NulFields(ls) {
		out[p] = true
	}
	return out, nil
}

// pendingBlob is the agent's content of one file, to be written into the
// commit's index.
type pendingBlob struct {
	entry Entry
	// text is the content; fromDisk says the file on disk is it (a
	// command wrote it), remove that the file is gone, link that text is
	// a symbolic link's target.
	text     string
	fromDisk bool
	remove   bool
	link     bool
}

// contentFor computes the agent's version of one file on top of base. A
// non-empty reason says why the file cannot be committed.
func (r *Repo) contentFor(ctx context.Context, rel string, c Change, base treeEntry) (pendingBlob, string, error) {
	pb := pendingBlob{entry: Entry{Path: rel, BaseMode: base.mode, Base: base.oid}}
	if c.FromDisk {
		return r.diskContent(pb)
	}
	if len(c.Steps) == 0 {
		return pb, "no edit recorded", nil
	}
	if base.mode == "120000" {
		return pb, "it is a symbolic link in the last commit", nil
	}
	pb.entry.Mode = base.mode
	if pb.entry.Mode == "" {
		pb.entry.Mode = "100644"
		if c.Mode&0o111 != 0 {
			pb.entry.Mode = "100755"
		}
	}
	steps := collapse(c.Steps)
	switch {
	case base.oid == "" && c.Created && len(steps) == 1:
		pb.text = steps[0].New
	case base.oid != "" && len(steps) == 1 && blobName(steps[0].Old, len(base.oid)) == base.oid:
		// The file was as the parent has it: the agent's text is the
		// whole change (a file with filters takes the slow path below).
		pb.text = steps[0].New
	default:
		parentText := ""
		if base.oid != "" {
			out, err := r.git.run(ctx, "", "cat-file", "--filters", "--path="+rel, base.oid)
			if err != nil {
				return pb, "", err
			}
			parentText = out
		}
		merged, clean, err := r.applySteps(ctx, parentText, steps)
		if err != nil {
			return pb, "", err
		}
		if !clean {
			return pb, "the agent's change overlaps your own uncommitted changes in it, so they cannot be told apart", nil
		}
		pb.text = merged
	}
	return pb, "", nil
}

// tooBig says why pb is over r.MaxFileBytes, "" when it is not.
func (r *Repo) tooBig(pb pendingBlob) string {
	if r.MaxFileBytes <= 0 || pb.remove || pb.link {
		return ""
	}
	size := int64(len(pb.text))
	if pb.fromDisk {
		st, err := os.Lstat(filepath.Join(r.Top, filepath.FromSlash(pb.entry.Path)))
		if err != nil {
			return ""
		}
		size = st.Size()
	}
	if size <= r.MaxFileBytes {
		return ""
	}
	return fmt.Sprintf("it is %s, over hooks.max_file_bytes (%s); commit it yourself with git if it belongs in the repository", Size(size), Size(r.MaxFileBytes))
}

// Size says n bytes in words ("300.0 MB").
func Size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// diskContent is the content of a file as it is on disk (a command wrote
// it): a symbolic link is committed as a link, never followed.
func (r *Repo) diskContent(pb pendingBlob) (pendingBlob, string, error) {
	abs := filepath.Join(r.Top, filepath.FromSlash(pb.entry.Path))
	st, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		pb.remove = true
		return pb, "", nil
	case err != nil:
		return pb, "", err
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(abs)
		if err != nil {
			return pb, "", err
		}
		pb.entry.Mode, pb.text, pb.link = "120000", target, true
		return pb, "", nil
	case !st.Mode().IsRegular():
		return pb, "it is not a regular file", nil
	}
	pb.fromDisk = true
	return pb, "", nil
}

// collapse joins consecutive steps where each started from the text the
// previous one wrote (nobody typed in between) into one.
func collapse(steps []Step) []Step {
	out := []Step{steps[0]}
	for _, s := range steps[1:] {
		last := &out[len(out)-1]
		if s.Old == last.New {
			last.New = s.New
			continue
		}
		out = append(out, s)
	}
	return out
}

// blobName is git's object name of text as a blob, in the hash whose
// names are oidLen hex digits long.
func blobName(text string, oidLen int) string {
	header := "blob " + strconv.Itoa(len(text)) + "\x00"
	if oidLen == 64 {
		h := sha256.New()
		h.Write([]byte(header))
		h.Write([]byte(text))
		return hex.EncodeToString(h.Sum(nil))
	}
	h := sha1.New()
	h.Write([]byte(header))
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil))
}

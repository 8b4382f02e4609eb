package changes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// A protected name a command created is held out of the folder
// (CommandChange.Held, package workspace's heldnames.go). Keeping it
// moves it back, where nothing is now; discarding it deletes it. Neither
// commits anything: loom never commits its own or the editors'
// configuration.

// maxHeldText bounds the text of a held file shown as its diff.
const maxHeldText = 64 << 10

// MoveTree moves src (a file, link or directory, never followed) to dst:
// a rename, or across file systems a copy and then src removed.
func MoveTree(src, dst string) error {
	err := os.Rename(src, dst)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	if err := copyTree(src, dst); err != nil {
		os.RemoveAll(dst)
		return err
	}
	return os.RemoveAll(src)
}

// copyTree copies src to dst: directories, regular files (with their
// permissions) and links (as links); other kinds are left out.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(to, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, info.Mode().Perm())
		}
		return nil
	})
}

// DescribeHeld is what the user reads of a held name (rel, held at
// stash): a file's text as a diff from nothing, a link's target, a
// directory's files (and a git directory's configuration), with its size.
func DescribeHeld(rel, stash string) (diff string, size int64) {
	st, err := os.Lstat(stash)
	if err != nil {
		return "", 0
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(stash)
		return fmt.Sprintf("held: %s is a link to %s\n", rel, target), 0
	case st.Mode().IsRegular():
		b, err := os.ReadFile(stash)
		if err != nil || len(b) > maxHeldText || isBinary(string(b)) {
			return fmt.Sprintf("held: %s (%d bytes)\n", rel, st.Size()), st.Size()
		}
		lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
		var sb strings.Builder
		fmt.Fprintf(&sb, "--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", rel, len(lines))
		for _, l := range lines {
			sb.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
		}
		return sb.String(), st.Size()
	}
	var files []string
	filepath.WalkDir(stash, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			r, _ := filepath.Rel(stash, p)
			files = append(files, filepath.ToSlash(r))
			if info, err := d.Info(); err == nil {
				size += info.Size()
			}
		}
		return nil
	})
	sort.Strings(files)
	shown := files
	if len(shown) > 40 {
		shown = append(shown[:40:40], fmt.Sprintf("and %d more", len(files)-40))
	}
	diff = fmt.Sprintf("held: %s, a directory of %d files: %s\n", rel, len(files), strings.Join(shown, ", "))
	if b, err := os.ReadFile(filepath.Join(stash, "config")); err == nil && len(b) <= maxHeldText && filepath.Base(rel) == ".git" {
		diff += "its config:\n" + string(b)
	}
	return diff, size
}

// splitHeld parts changes into the held names and the rest.
func splitHeld(changes []CommandChange) (held, rest []CommandChange) {
	for _, c := range changes {
		if c.Held {
			held = append(held, c)
		} else {
			rest = append(rest, c)
		}
	}
	return held, rest
}

// keepHeld moves held names back into the folder, each where nothing is
// now, under directories that are directories (never a link followed).
func (t *Tree) keepHeld(held []CommandChange) (Outcome, error) {
	var done, rels []string
	for _, c := range held {
		if c.Stash == "" {
			return Outcome{}, fmt.Errorf("%s is no longer held", c.Rel)
		}
		if _, err := os.Lstat(c.Path); !errors.Is(err, fs.ErrNotExist) {
			return Outcome{}, fmt.Errorf("%s exists again in the folder, so the held one is not put back; discard it (or move that one away first)", c.Rel)
		}
		if err := t.heldParents(c.Path); err != nil {
			return Outcome{}, fmt.Errorf("keeping %s: %w", c.Rel, err)
		}
		if err := MoveTree(c.Stash, c.Path); err != nil {
			return Outcome{}, fmt.Errorf("keeping %s: %w", c.Rel, err)
		}
		os.Remove(filepath.Join(filepath.Dir(c.Stash), heldRecordName))
		os.Remove(filepath.Dir(c.Stash))
		done, rels = append(done, c.Path), append(rels, c.Rel)
	}
	msg := "kept " + strings.Join(rels, ", ") + ", which the agent's command created: it is back in the folder and takes effect (loom does not commit it)"
	return Outcome{
		Then:    func(View, []fsm.Action) { t.settle(done) },
		Notes:   []Note{{Kind: Info, Text: msg, Visible: true}},
		Message: msg,
	}, nil
}

// heldParents makes the directories between the folder and p that are
// missing, and refuses one that is not a directory (a link).
func (t *Tree) heldParents(p string) error {
	rel, err := filepath.Rel(t.dir, filepath.Dir(p))
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("%s is outside the folder", p)
	}
	if rel == "." {
		return nil
	}
	d := t.dir
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		d = filepath.Join(d, part)
		st, err := os.Lstat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(d, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		case !st.IsDir():
			return fmt.Errorf("%s is not a directory", d)
		}
	}
	return nil
}

// discardHeld deletes held names.
func (t *Tree) discardHeld(held []CommandChange) (Outcome, error) {
	var done, rels []string
	for _, c := range held {
		if c.Stash != "" {
			if err := os.RemoveAll(filepath.Dir(c.Stash)); err != nil {
				return Outcome{}, fmt.Errorf("discarding %s: %w", c.Rel, err)
			}
		}
		done, rels = append(done, c.Path), append(rels, c.Rel)
	}
	msg := "discarded " + strings.Join(rels, ", ") + ", which the agent's command created: loom deleted it"
	return Outcome{
		Then:    func(View, []fsm.Action) { t.settle(done) },
		Notes:   []Note{{Kind: Info, Text: msg, Visible: true}},
		Message: msg,
	}, nil
}

// withHeld joins the outcome of the held names (h, done already) to
// that of the other changes (o): after o's commit, when it has one.
func withHeld(h, o Outcome) Outcome {
	join := func(r Outcome) Outcome {
		then := r.Then
		r.Then = func(v View, acts []fsm.Action) {
			h.Then(v, acts)
			if then != nil {
				then(v, acts)
			}
		}
		r.Notes = append(h.Notes, r.Notes...)
		r.Message = joinNotes(h.Message, []string{r.Message})
		return r
	}
	if o.After == nil {
		return join(o)
	}
	after := o.After
	o.After = func(d Done) (Outcome, error) {
		r, err := after(d)
		if err != nil {
			return r, err
		}
		return join(r), nil
	}
	return o
}

// heldRecordName is the file, beside a held name in its hold directory,
// that says where it came from: a restarted loom lists it again.
const heldRecordName = "held.json"

// HeldRecord is where a held name came from.
type HeldRecord struct {
	// Folder is the workspace folder (absolute), Rel the name in it.
	Folder  string `json:"folder"`
	Rel     string `json:"rel"`
	Command string `json:"command"`
	Turn    uint64 `json:"turn"`
	// Stash is the held name's path now (not stored: its hold
	// directory's entry).
	Stash string `json:"-"`
}

// WriteHeldRecord records r in the hold directory hold.
func WriteHeldRecord(hold string, r HeldRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(hold, heldRecordName), b, 0o600)
}

// HeldRecords are the names held in base (the state directory's held/)
// for folder whose held name is still there, by name.
func HeldRecords(base, folder string) []HeldRecord {
	holds, _ := filepath.Glob(filepath.Join(base, "hold-*", heldRecordName))
	var out []HeldRecord
	for _, rec := range holds {
		b, err := os.ReadFile(rec)
		var r HeldRecord
		if err != nil || json.Unmarshal(b, &r) != nil || r.Folder != folder || r.Rel == "" || strings.Contains("/"+r.Rel+"/", "/../") {
			continue
		}
		r.Stash = filepath.Join(filepath.Dir(rec), filepath.Base(filepath.FromSlash(r.Rel)))
		if _, err := os.Lstat(r.Stash); err != nil {
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	return out
}

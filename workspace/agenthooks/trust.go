package agenthooks

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A repository's hooks run only in a folder the user trusts, and only as
// they were when trusted: each hook is bound to its Fingerprint, a hash
// of its definition and of the repository files its command names (a
// script it runs: a hook script the agent rewrote is a changed hook).
// The fingerprints are recorded per folder in the trust file
// ([TrustFile]), which loom.trust rewrites; a hook whose fingerprint is
// not recorded is held back.

// maxNamedFile bounds a named file hashed whole; a larger one is hashed
// by its size and first bytes (still changed by any rewrite that changes
// its size or head).
const maxNamedFile = 4 << 20

// Fingerprint is the hash a repository hook is trusted under: its event,
// matcher, command, timeout, directory and environment, and the content
// of every file inside folder that its command line names.
func Fingerprint(h *Hook, folder string) string {
	sum := sha256.New()
	// Paths relative to the folder: the same hook through a symlinked
	// path is the same hook.
	rel, _ := filepath.Rel(folder, h.Source)
	dir, _ := filepath.Rel(folder, h.Dir)
	fmt.Fprintf(sum, "%s\x00%s\x00%s\x00%s\x00%s\x00%d\x00%s\x00", rel, h.Format, h.Event, h.Matcher, h.Command, h.Timeout, dir)
	keys := make([]string, 0, len(h.Env))
	for k := range h.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(sum, "env %s=%s\x00", k, h.Env[k])
	}
	for _, f := range NamedFiles(h, folder) {
		r, _ := filepath.Rel(folder, f)
		fmt.Fprintf(sum, "file %s\x00", r)
		data, err := readHead(f)
		if err != nil {
			fmt.Fprintf(sum, "unreadable\x00")
			continue
		}
		sum.Write(data)
		sum.Write([]byte{0})
	}
	return hex.EncodeToString(sum.Sum(nil))[:32]
}

func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, min(st.Size(), maxNamedFile))
	n, err := f.Read(buf)
	if err != nil && n == 0 && len(buf) > 0 {
		return nil, err
	}
	return append(buf[:n], []byte(fmt.Sprintf("\x00size=%d", st.Size()))...), nil
}

// NamedFiles are the regular files inside folder that h's command line
// names: each of its words, expanded as the shell expands them ([Expand]:
// $CLAUDE_PROJECT_DIR and ${CLAUDE_PROJECT_DIR:-.}, "$(git rev-parse
// --show-toplevel)", ~, the environment), that is a path to one, relative
// to the hook's directory or absolute. Symlinks are resolved.
func NamedFiles(h *Hook, folder string) []string {
	root, err := filepath.EvalSymlinks(folder)
	if err != nil {
		root = folder
	}
	words := Expand(h, folder, nil).Words
	seen := map[string]bool{}
	var out []string
	for _, w := range words {
		real, err := filepath.EvalSymlinks(w)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(root, real)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() || seen[real] {
			continue
		}
		seen[real] = true
		out = append(out, real)
	}
	sort.Strings(out)
	return out
}

// TrustFile is the file the trusted hooks' fingerprints are recorded in:
// trusted-hooks in loom's user configuration directory dir.
func TrustFile(dir string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "trusted-hooks")
}

// noneRecorded marks a folder recorded with no hooks.
const noneRecorded = "-"

// ReadTrusted returns the fingerprints recorded for folder (resolved) in
// the trust file at path, and whether the folder was recorded at all.
func ReadTrusted(path, folder string) (map[string]bool, bool, error) {
	lines, err := readLines(path)
	folder = resolve(folder)
	fps := map[string]bool{}
	recorded := false
	for _, l := range lines {
		f, fp, ok := strings.Cut(l, "\t")
		if !ok || resolve(f) != folder {
			continue
		}
		recorded = true
		if fp != noneRecorded {
			fps[fp] = true
		}
	}
	return fps, recorded, err
}

// RecordTrusted records fps as folder's trusted hooks, replacing what the
// file recorded for it.
func RecordTrusted(path, folder string, fps []string) error {
	if path == "" {
		return errors.New("no configuration directory to record trusted hooks in")
	}
	lines, err := readLines(path)
	if err != nil {
		return err
	}
	folder = resolve(folder)
	var b bytes.Buffer
	b.WriteString("# Repository hooks trusted with loom.trust: folder<TAB>fingerprint (definition and the files it runs).\n")
	for _, l := range lines {
		if f, _, ok := strings.Cut(l, "\t"); ok && resolve(f) != folder {
			b.WriteString(l + "\n")
		}
	}
	if len(fps) == 0 {
		fps = []string{noneRecorded}
	}
	for _, fp := range fps {
		b.WriteString(folder + "\t" + fp + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readLines(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out, nil
}

func resolve(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// Gate decides which hooks may run: the user's always; a repository's
// only when the folder is trusted and the hook's fingerprint is recorded.
type Gate struct {
	// Folder is the workspace folder; Trusted whether the user trusts it.
	Folder  string
	Trusted bool
	// Recorded are the fingerprints trusted for the folder.
	Recorded map[string]bool
	// Unresolved, when set, holds back a repository hook whose command
	// line loom cannot resolve to the files it runs (trust could not
	// bind them: see [Expand]); it says why (commands need approval).
	Unresolved string
}

// Admit reports whether h may run now (its fingerprint is computed now:
// a script changed since trust is caught at the moment it would run),
// and why not.
func (g Gate) Admit(h *Hook) (bool, string) {
	if h.Scope == ScopeUser {
		return true, ""
	}
	if !g.Trusted {
		return false, "the folder is not trusted"
	}
	if !g.Recorded[Fingerprint(h, g.Folder)] {
		return false, "added or changed since you trusted the folder (its definition or a file it runs)"
	}
	if g.Unresolved != "" {
		if un := Expand(h, g.Folder, nil).Unresolved; len(un) > 0 {
			return false, fmt.Sprintf("its command names what loom cannot resolve to files without running it (%s), so trust cannot bind what it runs, and %s", strings.Join(un, ", "), g.Unresolved)
		}
	}
	return true, ""
}

// Fingerprints returns the fingerprints of s's repository hooks.
func (s *Set) Fingerprints(folder string) []string {
	var out []string
	if s == nil {
		return nil
	}
	for _, h := range s.Hooks {
		if h.Scope == ScopeRepository {
			out = append(out, Fingerprint(h, folder))
		}
	}
	sort.Strings(out)
	return out
}

package tools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

//go:embed grep.md
var grepDescription string

// Limits of grep.
const (
	grepMaxMatches   = 200      // matching lines shown
	grepMaxLineBytes = 300      // a longer matching line is shortened
	grepMaxFileBytes = 10 << 20 // larger files are skipped
)

// Grep is the grep tool: a regexp search over the workspace's files.
type Grep struct{}

type grepParams struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
	Glob    string `json:"glob,omitempty"`
}

// Name implements Tool.
func (Grep) Name() string { return "grep" }

// Description implements Tool.
func (Grep) Description() string { return grepDescription }

// Mutating implements Tool: grep only reads.
func (Grep) Mutating() bool { return false }

// Schema implements Tool.
func (Grep) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"pattern":{"type":"string","description":"Go RE2 regular expression, matched per line"},` +
		`"path":{"type":"string","description":"directory or file to search, relative to the workspace root (default: the root)"},` +
		`"glob":{"type":"string","description":"glob on file names (\"*.go\") or, with a slash, on relative paths"}},` +
		`"required":["pattern"],"additionalProperties":false}`)
}

// grepFile is what one file contributed.
type grepFile struct {
	lines   []string // formatted "path:line: text", at most grepMaxMatches
	matches int      // matching lines in all
	skipped string   // why the file was skipped, if it was ("binary", "large")
}

// Run implements Tool. Files are read through env.Files, so open editor
// buffers are searched as the user sees them; symlinks and other
// non-regular files are skipped.
func (Grep) Run(ctx context.Context, env *Env, args json.RawMessage) (Result, error) {
	var p grepParams
	if err := decodeArgs(args, &p); err != nil {
		return toolError("grep: %v", err), nil
	}
	m, glob, res, ok := p.matchers()
	if !ok {
		return res, nil
	}
	root, rel, res, ok := resolveDir(env, "grep", p.Path)
	if !ok {
		return res, nil
	}
	list, err := listFiles(ctx, root, rel)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Result{}, fmt.Errorf("grep %s: %w", rel, err)
	}
	list.Paths = env.visible(root, list.Paths)
	paths := glob.filter(list.Paths)
	results := grepFiles(ctx, env, root, m, paths)
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	return grepReport(p.Pattern, results, len(paths), list.Git), nil
}

// matchers compiles the pattern (for a line, and for a whole file when
// that gives the same matches faster) and the glob; ok is false, with
// the refusal, when either is not valid.
func (p grepParams) matchers() (m *lineMatcher, glob *globMatcher, res Result, ok bool) {
	if p.Pattern == "" {
		return nil, nil, toolError("grep: pattern is empty"), false
	}
	re, err := regexp.Compile(p.Pattern)
	if err != nil {
		return nil, nil, toolError("grep: bad pattern: %v", err), false
	}
	m = &lineMatcher{line: re}
	if !strings.Contains(p.Pattern, `\A`) && !strings.Contains(p.Pattern, `\z`) && !strings.Contains(p.Pattern, "-m") {
		m.file, _ = regexp.Compile("(?m)" + p.Pattern)
	}
	if p.Glob != "" {
		if glob, err = compileGlob(p.Glob); err != nil {
			return nil, nil, toolError("grep: glob %q: %v", p.Glob, err), false
		}
	}
	return m, glob, Result{}, true
}

// grepReport is what the model reads of a search of searched files: the
// matching lines, up to grepMaxMatches, then how many more there were,
// what was skipped, and that .gitignore was not applied outside git.
func grepReport(pattern string, results []grepFile, searched int, git bool) Result {
	var b strings.Builder
	shown, total, files, binary, large := 0, 0, 0, 0, 0
	for _, r := range results {
		switch r.skipped {
		case "binary":
			binary++
		case "large":
			large++
		}
		if r.matches == 0 {
			continue
		}
		files++
		total += r.matches
		for _, line := range r.lines[:min(len(r.lines), grepMaxMatches-shown)] {
			b.WriteString(line)
			shown++
		}
	}
	if total == 0 {
		fmt.Fprintf(&b, "No matches in %d files.\n", searched-binary-large)
	} else if total > shown {
		fmt.Fprintf(&b, "(%d more matching lines not shown; %d in all, in %d files; narrow the search with path, glob or a more specific pattern)\n", total-shown, total, files)
	}
	if binary+large > 0 {
		fmt.Fprintf(&b, "(skipped %d binary and %d files over %d MB)\n", binary, large, grepMaxFileBytes>>20)
	}
	if !git {
		b.WriteString("(not a git repository: .gitignore was not applied)\n")
	}
	return Result{Text: b.String(), Summary: fmt.Sprintf("grep %q: %d matches in %d files", pattern, total, files)}
}

// grepFiles searches paths (relative to root: the workspace or a read
// root, whose files are shown by absolute path) in parallel; results are
// indexed like paths, so the output order does not depend on scheduling.
func grepFiles(ctx context.Context, env *Env, root string, m *lineMatcher, paths []string) []grepFile {
	results := make([]grepFile, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	// Reading files blocks in system calls: more workers than CPUs keep
	// the CPUs busy while others wait.
	workers := min(2*runtime.GOMAXPROCS(0)+2, max(1, len(paths)/16))
	files := env.files()
	_, disk := files.(DiskFiles)
	for range workers {
		wg.Go(func() {
			var buf []byte
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(paths) {
					return
				}
				abs := filepath.Join(root, filepath.FromSlash(paths[i]))
				name := paths[i]
				if root != env.Root {
					name = abs
				}
				var data []byte
				var skip string
				if disk {
					data, skip = readRegular(abs, &buf)
				} else {
					data, skip = readVia(files, abs)
				}
				if skip != "" || data != nil {
					results[i] = grepData(m, name, data, skip)
				}
			}
		})
	}
	wg.Wait()
	return results
}

// readRegular reads the regular file abs into *buf, reused between
// calls, with one open (following no symlink on the way: see
// openResolved), one fstat and the reads. It returns nil for a file to ignore, or the reason to skip it.
func readRegular(abs string, buf *[]byte) ([]byte, string) {
	fd, err := openResolved(abs, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, "" // gone, a symlink on the way (ELOOP) or unreadable
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, ""
	}
	if st.Size > grepMaxFileBytes {
		return nil, "large"
	}
	if cap(*buf) < int(st.Size)+1 {
		*buf = make([]byte, 0, max(int(st.Size)+1, 64<<10))
	}
	b := (*buf)[:cap(*buf)]
	n := 0
	for {
		if n == len(b) { // the file grew since the fstat
			if n > grepMaxFileBytes {
				return nil, "large"
			}
			b = slices.Grow(b[:n], 64<<10)
			b = b[:cap(b)]
			*buf = b[:0]
		}
		k, err := syscall.Read(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, ""
		}
		if k == 0 {
			break
		}
		n += k
	}
	return b[:n:n], ""
}

// readVia reads abs through a FileSource, skipping non-regular files.
func readVia(files FileSource, abs string) ([]byte, string) {
	fi, err := os.Lstat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, ""
	}
	if fi.Size() > grepMaxFileBytes {
		return nil, "large"
	}
	data, err := files.ReadFile(abs)
	if err != nil {
		return nil, ""
	}
	return data, ""
}

// lineMatcher matches lines; file, when not nil, is a multi-line version
// of the pattern that matches any text having a matching line, used to
// skip most files in one pass.
type lineMatcher struct {
	line, file *regexp.Regexp
}

// grepData searches the content data of the file rel; data may be a
// reused buffer, so nothing returned refers to it.
func grepData(m *lineMatcher, rel string, data []byte, skip string) grepFile {
	if skip != "" {
		return grepFile{skipped: skip}
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return grepFile{skipped: "binary"}
	}
	// With (?m), a line that matches makes the file match, as long as
	// lines end in a bare '\n' (a CRLF's '\r' would defeat "$"). The
	// converse does not hold (\s matches '\n'), so lines are checked below.
	if m.file != nil && bytes.IndexByte(data, '\r') < 0 && !m.file.Match(data) {
		return grepFile{}
	}
	var r grepFile
	lineNo := 0
	for len(data) > 0 {
		lineNo++
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !m.line.Match(line) {
			continue
		}
		r.matches++
		if len(r.lines) < grepMaxMatches {
			text := strings.ToValidUTF8(string(line), "\uFFFD")
			r.lines = append(r.lines, fmt.Sprintf("%s:%d: %s\n", rel, lineNo, truncate(text, grepMaxLineBytes)))
		}
	}
	return r
}

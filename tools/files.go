package tools

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/loom-lsp/loom-lsp/internal/gitcmd"
)

// walkLimit bounds the entries a plain walk visits outside a git repo.
const walkLimit = 500_000

// fileList is the workspace's files under one directory.
type fileList struct {
	// Paths are slash-separated, relative to the root, sorted, unique.
	Paths []string
	// Git is true when git listed them (so .gitignore was honoured).
	Git bool
	// Truncated is true when a plain walk stopped at walkLimit.
	Truncated bool
}

// listFiles lists the files under the directory rel (relative to root,
// "" for all). In a git work tree it asks git, which honours .gitignore,
// .git/info/exclude and the global excludes, and lists tracked and
// untracked files (deleted ones are dropped); elsewhere it walks the tree,
// skipping .git directories. Symlinks are listed, never followed.
func listFiles(ctx context.Context, root, rel string) (fileList, error) {
	if paths, err := gitListFiles(ctx, root, rel); err == nil {
		return fileList{Paths: dropGitPaths(root, paths), Git: true}, nil
	} else if ctx.Err() != nil {
		return fileList{}, ctx.Err()
	}
	return walkFiles(ctx, root, rel)
}

func gitListFiles(ctx context.Context, root, rel string) ([]string, error) {
	args := []string{"-C", root, "-c", "core.quotepath=off", "ls-files", "-z",
		"--cached", "--others", "--exclude-standard"}
	if rel != "" && rel != "." {
		args = append(args, "--", ":(literal)"+rel)
	}
	cmd := gitcmd.Command(ctx, "", args...)
	cmd.Env = append(cmd.Env, "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	// One string for the whole listing; the paths are slices of it.
	all := string(out)
	paths := make([]string, 0, strings.Count(all, "\x00"))
	for rec := range strings.SplitSeq(all, "\x00") {
		if len(rec) > 0 {
			paths = append(paths, rec)
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	return dropDeleted(root, paths), nil
}

// dropDeleted removes the paths that no longer exist: git lists tracked
// files deleted from the work tree. Reading each directory's entries once
// (getdents, names compared in place) is much cheaper than git's
// --deleted or a stat per file, which both cost a system call per file.
func dropDeleted(root string, paths []string) []string {
	byDir := map[string][]int{} // directory ("" or "a/b/") -> indexes in paths
	for i, p := range paths {
		dir := p[:strings.LastIndexByte(p, '/')+1]
		byDir[dir] = append(byDir[dir], i)
	}
	gone := make([]bool, len(paths))
	names := map[string]int{} // base name -> index in paths, per directory
	buf := make([]byte, 64<<10)
	for dir, group := range byDir {
		clear(names)
		for _, i := range group {
			names[paths[i][len(dir):]] = i
			gone[i] = true
		}
		readNames(filepath.Join(root, filepath.FromSlash(dir)), buf, func(name []byte) {
			if i, ok := names[string(name)]; ok { // no allocation for a lookup
				gone[i] = false
			}
		})
	}
	out := paths[:0]
	for i, p := range paths {
		if !gone[i] {
			out = append(out, p)
		}
	}
	return out
}

func walkFiles(ctx context.Context, root, rel string) (fileList, error) {
	var list fileList
	start := filepath.Join(root, filepath.FromSlash(rel))
	n := 0
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return err
			}
			return nil // unreadable entry: skip it
		}
		if n++; n > walkLimit {
			list.Truncated = true
			return filepath.SkipAll
		}
		if n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if strings.EqualFold(d.Name(), ".git") && p != start {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a gitfile (worktree, submodule)
		}
		if d.IsDir() {
			return nil
		}
		list.Paths = append(list.Paths, relTo(root, p))
		return nil
	})
	if err != nil {
		return fileList{}, err
	}
	slices.Sort(list.Paths)
	list.Paths = dropGitPaths(root, list.Paths)
	return list, nil
}

// errBadGlob is a glob that cannot be compiled.
var errBadGlob = errors.New("invalid glob")

// globMatcher matches slash-separated relative paths against a glob:
// "*" and "?" stay within a path element, "**" crosses elements,
// "[...]" is a class and "{a,b}" an alternative. A glob without "/"
// matches the base name only, so "*.go" finds Go files at any depth.
type globMatcher struct {
	re       *regexp.Regexp
	baseOnly bool
}

func compileGlob(glob string) (*globMatcher, error) {
	var b strings.Builder
	b.WriteString("^")
	depth := 0
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch c {
		case '*':
			var re string
			re, i = globStar(glob, i)
			b.WriteString(re)
		case '?':
			b.WriteString("[^/]")
		case '[':
			re, end, ok := globClass(glob, i)
			if !ok {
				return nil, errBadGlob
			}
			b.WriteString(re)
			i = end
		case '{':
			depth++
			b.WriteString("(?:")
		case '}':
			if depth == 0 {
				return nil, errBadGlob
			}
			depth--
			b.WriteString(")")
		case ',':
			if depth > 0 {
				b.WriteString("|")
			} else {
				b.WriteString(",")
			}
		default:
			b.WriteString(regexp.QuoteMeta(glob[i : i+1])) // bytes of UTF-8 runes pass through
		}
	}
	if depth != 0 {
		return nil, errBadGlob
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, errBadGlob
	}
	return &globMatcher{re: re, baseOnly: !strings.Contains(glob, "/")}, nil
}

// globStar translates the star at glob[i]: "*" within an element, "**"
// across elements, "**/" any leading directories (or none); it returns
// the expression and the index of the glob's last byte it read.
func globStar(glob string, i int) (re string, last int) {
	if i+1 >= len(glob) || glob[i+1] != '*' {
		return "[^/]*", i
	}
	if i+2 < len(glob) && glob[i+2] == '/' {
		return "(?:.*/)?", i + 2
	}
	return ".*", i + 1
}

// globClass translates the class "[...]" opening at glob[i] ("[!...]"
// negates it); it returns the expression and the index of its "]", ok
// false when the class is not closed.
func globClass(glob string, i int) (re string, end int, ok bool) {
	j := strings.IndexByte(glob[i+1:], ']')
	if j < 0 {
		return "", i, false
	}
	class := glob[i+1 : i+1+j]
	if strings.HasPrefix(class, "!") {
		class = "^" + class[1:]
	}
	return "[" + strings.ReplaceAll(class, `\`, `\\`) + "]", i + j + 1, true
}

func (g *globMatcher) match(rel string) bool {
	if g.baseOnly {
		rel = rel[strings.LastIndexByte(rel, '/')+1:]
	}
	return g.re.MatchString(rel)
}

// filter is the paths g matches, in order; all of them when g is nil (no
// pattern).
func (g *globMatcher) filter(paths []string) []string {
	if g == nil {
		return paths
	}
	matched := paths[:0:0]
	for _, path := range paths {
		if g.match(path) {
			matched = append(matched, path)
		}
	}
	return matched
}

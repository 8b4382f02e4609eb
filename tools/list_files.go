package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

//go:embed list_files.md
var listFilesDescription string

// listMaxEntries caps the paths list_files shows.
const listMaxEntries = 1000

// ListFiles is the list_files tool: the workspace's files, .gitignore
// respected.
type ListFiles struct{}

type listFilesParams struct {
	Path    string `json:"path,omitempty"`
	Pattern string `json:"pattern,omitempty"`
}

// Name implements Tool.
func (ListFiles) Name() string { return "list_files" }

// Description implements Tool.
func (ListFiles) Description() string { return listFilesDescription }

// Mutating implements Tool: list_files only reads.
func (ListFiles) Mutating() bool { return false }

// Schema implements Tool.
func (ListFiles) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"directory to list, relative to the workspace root (default: the root)"},` +
		`"pattern":{"type":"string","description":"glob on file names (\"*.go\") or, with a slash, on relative paths (\"src/**/*.ts\")"}},` +
		`"additionalProperties":false}`)
}

// Run implements Tool.
func (ListFiles) Run(ctx context.Context, env *Env, args json.RawMessage) (Result, error) {
	var p listFilesParams
	if err := decodeArgs(args, &p); err != nil {
		return toolError("list_files: %v", err), nil
	}
	var glob *globMatcher
	if p.Pattern != "" {
		g, err := compileGlob(p.Pattern)
		if err != nil {
			return toolError("list_files: pattern %q: %v", p.Pattern, err), nil
		}
		glob = g
	}
	root, rel, res, ok := resolveDir(env, "list_files", p.Path)
	if !ok {
		return res, nil
	}
	list, err := listFiles(ctx, root, rel)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Result{}, fmt.Errorf("list_files %s: %w", rel, err)
	}
	list.Paths = env.visible(root, list.Paths)
	matched := glob.filter(list.Paths)
	where := rel
	if where == "" {
		where = "."
	}
	return Result{Text: listing(list, matched, glob != nil, root, env.Root), Summary: fmt.Sprintf("listed %s: %d files", where, len(matched))}, nil
}

// listing is what the model reads of a listing: the paths matched (up
// to listMaxEntries; absolute in a read root other than the workspace),
// then how many more there were, how many the pattern left out, and
// what made the listing incomplete or unfiltered.
func listing(list fileList, matched []string, patterned bool, root, workspace string) string {
	var b strings.Builder
	shown := min(len(matched), listMaxEntries)
	for _, path := range matched[:shown] {
		if root != workspace {
			path = filepath.Join(root, path) // in a read root: absolute
		}
		b.WriteString(path)
		b.WriteByte('\n')
	}
	if len(matched) == 0 {
		b.WriteString("No files found.\n")
	}
	if left := len(matched) - shown; left > 0 {
		fmt.Fprintf(&b, "(%d more files not shown, %d in all; narrow the listing with path or pattern)\n", left, len(matched))
	}
	if patterned && len(list.Paths) > len(matched) {
		fmt.Fprintf(&b, "(%d files did not match the pattern)\n", len(list.Paths)-len(matched))
	}
	if list.Truncated {
		fmt.Fprintf(&b, "(the walk stopped after %d entries; the listing is incomplete)\n", walkLimit)
	}
	if !list.Git {
		b.WriteString("(not a git repository: .gitignore was not applied)\n")
	}
	return b.String()
}

// resolveDir confines an optional path argument naming a directory or
// file and returns the root it lies in (the workspace, or a read root)
// and the path relative to that root ("" for the root). On a failure it
// returns the tool error to show and false.
func resolveDir(env *Env, tool, p string) (string, string, Result, bool) {
	if p == "" {
		p = "."
	}
	root, abs, err := env.resolveRead(p)
	if err == nil {
		err = checkGitDir(root, abs)
	}
	if err != nil {
		return "", "", toolError("%s: %v", tool, err), false
	}
	rel := relTo(root, abs)
	if _, err := os.Stat(abs); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", toolError("%s: %s: no such file or directory", tool, env.shown(root, abs)), false
		}
		return "", "", toolError("%s: %s: %v", tool, env.shown(root, abs), err), false
	}
	if rel == "." {
		rel = ""
	}
	return root, rel, Result{}, true
}

package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
)

//go:embed edit_file.md
var editFileDescription string

// EditFile is the edit_file tool: an exact string replacement, returned
// as an Edit for the workspace to apply. It never writes.
type EditFile struct{}

type editFileParams struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// Name implements Tool.
func (EditFile) Name() string { return "edit_file" }

// Description implements Tool.
func (EditFile) Description() string { return editFileDescription }

// Mutating implements Tool: the edit it returns changes the workspace.
func (EditFile) Mutating() bool { return true }

// Schema implements Tool.
func (EditFile) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"file path, relative to the workspace root"},` +
		`"old_string":{"type":"string","description":"exact text to replace; empty to create a new file"},` +
		`"new_string":{"type":"string","description":"replacement text"},` +
		`"replace_all":{"type":"boolean","description":"replace every occurrence instead of exactly one (default false)"}},` +
		`"required":["path","old_string","new_string"],"additionalProperties":false}`)
}

// Run implements Tool. It refuses an existing file that the model has
// not read, or that changed since it read it (see ReadTracker).
func (EditFile) Run(ctx context.Context, env *Env, args json.RawMessage) (Result, error) {
	var p editFileParams
	if err := decodeArgs(args, &p); err != nil {
		return toolError("edit_file: %v", err), nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if p.OldString == p.NewString {
		return toolError("edit_file: old_string and new_string are the same; nothing to do"), nil
	}
	abs, rel, res, ok := resolveForWrite(env, "edit_file", p.Path)
	if !ok {
		return res, nil
	}
	data, err := env.files().ReadFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		if p.OldString != "" {
			return toolError("edit_file %s: file not found (to create it, use an empty old_string)", rel), nil
		}
		e := newEdit(env.Root, abs, true, "", p.NewString, 0o644)
		return editResult("created", e, 0), nil
	}
	if err != nil {
		return readError("edit_file", rel, err)
	}
	oldText, rebase, res, ok := editBase(env, abs, rel, data)
	if !ok {
		return res, nil
	}
	newText, n, res, ok := p.replace(rel, oldText, rebase)
	if !ok {
		return res, nil
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(abs); err == nil {
		mode = fi.Mode().Perm()
	}
	verb := "edited"
	if current := string(data); rebase {
		merged, err := Rebase(oldText, newText, current)
		if err != nil {
			return toolError("edit_file %s: %v, and the user (or another program) changed the lines you are editing: %v", rel, ErrStale, err), nil
		}
		oldText, newText = current, merged
		verb = "edited (rebased onto the file's newer text, changed since you read it)"
	}
	return editResult(verb, newEdit(env.Root, abs, false, oldText, newText, mode), n), nil
}

// editBase is the text an edit of the file (its text data) applies to:
// the file's own; or, when the file changed since the model read it (the
// user typing in it), the text the model read, rebase set: the edit is
// made where the model saw it and rebased onto the new text, unless both
// changed the same lines. ok is false, with the refusal, when the model
// has not read the file, or the file is not text.
func editBase(env *Env, abs, rel string, data []byte) (base string, rebase bool, res Result, ok bool) {
	base = string(data)
	if res, ok := checkRead(env, "edit_file", abs, rel, data); !ok {
		read, has := env.Reads.ReadText(abs)
		if !has || env.Reads.Check(abs, []byte(read)) != nil || isBinary([]byte(read)) {
			return "", false, res, false
		}
		base, rebase = read, true
	}
	if isBinary(data) {
		return "", false, toolError("edit_file %s: binary or non-UTF-8 file; it cannot be edited as text", rel), false
	}
	return base, rebase, Result{}, true
}

// replace makes the edit in text: old_string, which must match once
// (or, with replace_all, n times), becomes new_string, in the file's own
// line endings, keeping its BOM and its final newline (or its absence).
// ok is false, with the refusal, when old_string does not match as it
// must or the edit changes nothing; stale marks a text the model read
// that is no longer the file's.
func (p editFileParams) replace(rel, text string, stale bool) (newText string, n int, res Result, ok bool) {
	body, hasBOM := strings.CutPrefix(text, bom)
	if p.OldString == "" {
		if body != "" {
			return "", 0, toolError("edit_file %s: old_string is empty but the file exists and is not empty; give the text to replace, or use write_file to overwrite it", rel), false
		}
		p.OldString = body // replace the empty body
	}
	oldStr, newStr := p.OldString, p.NewString
	if usesCRLF(body) {
		oldStr, newStr = toCRLF(oldStr), toCRLF(newStr)
		if !strings.Contains(body, oldStr) && strings.Contains(body, p.OldString) {
			oldStr, newStr = p.OldString, p.NewString // a mixed file: match as given
		}
	}
	n = 1
	if oldStr != "" {
		n = strings.Count(body, oldStr)
	}
	switch {
	case n == 0 && stale:
		return "", 0, toolError("edit_file %s: %v", rel, ErrStale), false
	case n == 0:
		return "", 0, toolError("edit_file %s: old_string was not found in the file%s", rel, closestHint(body, p.OldString)), false
	case n > 1 && !p.ReplaceAll:
		return "", 0, toolError("edit_file %s: old_string matched %d times (at lines %s); add surrounding lines to make it unique, or set replace_all", rel, n, matchLines(body, oldStr, 10)), false
	}
	newBody := newStr
	if oldStr != "" {
		newBody = strings.Replace(body, oldStr, newStr, n)
	}
	newText = keepFinalNewline(body, newBody)
	if hasBOM {
		newText = bom + newText
	}
	if newText == text {
		return "", 0, toolError("edit_file %s: the edit changes nothing", rel), false
	}
	return newText, n, Result{}, true
}

// resolveForWrite confines a path the tool will change; paths inside a
// .git directory and loom's own configuration (config.IsProtected) are
// refused.
func resolveForWrite(env *Env, tool, p string) (abs, rel string, res Result, ok bool) {
	abs, err := Resolve(env.Root, p)
	if err != nil {
		return "", "", toolError("%s: %v", tool, err), false
	}
	rel = relTo(env.Root, abs)
	if rel == "." {
		return "", "", toolError("%s: %q is the workspace root, not a file", tool, p), false
	}
	if err := checkGitDir(env.Root, abs); err != nil {
		return "", "", toolError("%s: %v", tool, err), false
	}
	if err := config.CheckProtected(env.Root, abs); err != nil {
		return "", "", toolError("%s: %v", tool, err), false
	}
	if env.hiddenInRoot(abs) {
		return "", "", toolError("%s: %s is hidden from the agent (as from its commands)", tool, rel), false
	}
	return abs, rel, Result{}, true
}

// checkRead applies the read-before-edit policy to an existing file.
func checkRead(env *Env, tool, abs, rel string, current []byte) (Result, bool) {
	if env.Reads == nil {
		return Result{}, true
	}
	err := env.Reads.Check(abs, current)
	switch {
	case err == nil:
		return Result{}, true
	case errors.Is(err, ErrNotRead):
		return toolError("%s %s: %v", tool, rel, ErrNotRead), false
	case errors.Is(err, ErrStale):
		return toolError("%s %s: %v", tool, rel, ErrStale), false
	}
	return toolError("%s %s: %v", tool, rel, err), false
}

// keepFinalNewline gives after the final newline presence of before.
func keepFinalNewline(before, after string) string {
	if before == "" || after == "" {
		return after
	}
	had, has := strings.HasSuffix(before, "\n"), strings.HasSuffix(after, "\n")
	switch {
	case had && !has:
		if strings.HasSuffix(before, "\r\n") {
			return after + "\r\n"
		}
		return after + "\n"
	case !had && has:
		after = strings.TrimSuffix(after, "\n")
		return strings.TrimSuffix(after, "\r")
	}
	return after
}

// editResult reports an edit to the model and the UI.
func editResult(verb string, e *Edit, replacements int) Result {
	added, removed := diffStat(e.Diff)
	text := fmt.Sprintf("%s %s", verb, e.RelPath)
	if replacements > 1 {
		text += fmt.Sprintf(" (%d replacements)", replacements)
	}
	text += fmt.Sprintf(": +%d -%d lines.\n", added, removed)
	return Result{Text: text, Summary: fmt.Sprintf("%s %s (+%d -%d)", verb, e.RelPath, added, removed), Edit: e}
}

// diffStat counts the added and removed lines of a unified diff.
func diffStat(diff string) (added, removed int) {
	for line := range strings.Lines(diff) {
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
		case strings.HasPrefix(line, "+"):
			added++
		case strings.HasPrefix(line, "-"):
			removed++
		}
	}
	return added, removed
}

// matchLines lists the 1-based lines where s occurs in text, at most max.
func matchLines(text, s string, limit int) string {
	var out []string
	line, from := 1, 0
	for len(out) < limit {
		i := strings.Index(text[from:], s)
		if i < 0 {
			break
		}
		line += strings.Count(text[from:from+i], "\n")
		out = append(out, fmt.Sprint(line))
		line += strings.Count(s, "\n")
		from += i + len(s)
	}
	if strings.Count(text[from:], s) > 0 {
		out = append(out, "…")
	}
	return strings.Join(out, ", ")
}

var lineNumberPrefix = regexp.MustCompile(`(?m)^\s*\d+\t`)

// closestHint explains, when cheaply possible, why old was not found:
// read_file line numbers copied into it, or a line that matches only
// when whitespace is ignored.
func closestHint(text, old string) string {
	if lineNumberPrefix.MatchString(old) {
		return "; old_string seems to start with read_file line numbers (\"  12<TAB>\"): remove them"
	}
	var want string
	for l := range strings.Lines(old) {
		if w := strings.Join(strings.Fields(l), " "); w != "" {
			want = w
			break
		}
	}
	if want == "" {
		return ""
	}
	var lines []string
	n := 0
	for l := range strings.Lines(text) {
		n++
		if strings.Join(strings.Fields(l), " ") == want {
			lines = append(lines, fmt.Sprint(n))
			if len(lines) == 5 {
				break
			}
		}
	}
	if len(lines) == 0 {
		return "; read the file again and copy old_string exactly"
	}
	return fmt.Sprintf("; a line equal to its first line up to whitespace is at line %s: check indentation, tabs and spaces, and read the file again", strings.Join(lines, ", "))
}

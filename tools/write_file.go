package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
)

//go:embed write_file.md
var writeFileDescription string

// WriteFile is the write_file tool: create or overwrite a file, returned
// as an Edit for the workspace to apply. It never writes.
type WriteFile struct{}

type writeFileParams struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Name implements Tool.
func (WriteFile) Name() string { return "write_file" }

// Description implements Tool.
func (WriteFile) Description() string { return writeFileDescription }

// Mutating implements Tool: the edit it returns changes the workspace.
func (WriteFile) Mutating() bool { return true }

// Schema implements Tool.
func (WriteFile) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"file path, relative to the workspace root"},` +
		`"content":{"type":"string","description":"the file's full new content"}},` +
		`"required":["path","content"],"additionalProperties":false}`)
}

// Run implements Tool. Overwriting an existing file follows the same
// read-before-edit policy as edit_file; the file keeps its BOM and CRLF
// line endings.
func (WriteFile) Run(ctx context.Context, env *Env, args json.RawMessage) (Result, error) {
	var p writeFileParams
	if err := decodeArgs(args, &p); err != nil {
		return toolError("write_file: %v", err), nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	abs, rel, res, ok := resolveForWrite(env, "write_file", p.Path)
	if !ok {
		return res, nil
	}
	data, err := env.files().ReadFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return editResult("created", newEdit(env.Root, abs, true, "", p.Content, 0o644), 0), nil
	}
	if err != nil {
		return readError("write_file", rel, err)
	}
	if res, ok := checkRead(env, "write_file", abs, rel, data); !ok {
		return res, nil
	}
	oldText := string(data)
	body, hasBOM := strings.CutPrefix(oldText, bom)
	newText := strings.TrimPrefix(p.Content, bom)
	if usesCRLF(body) {
		newText = toCRLF(newText)
	}
	if hasBOM {
		newText = bom + newText
	}
	if newText == oldText {
		return Result{Text: "write_file " + rel + ": the file already has this content; nothing to do.", Summary: "unchanged " + rel}, nil
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(abs); err == nil {
		mode = fi.Mode().Perm()
	}
	return editResult("wrote", newEdit(env.Root, abs, false, oldText, newText, mode), 0), nil
}

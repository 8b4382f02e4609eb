package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
)

//go:embed read_file.md
var readFileDescription string

// Limits of read_file.
const (
	readDefaultLimit = 2000 // lines shown when limit is not given
	readMaxLineBytes = 2000 // longer lines are shortened
)

// ReadFile is the read_file tool: numbered lines of a text file.
type ReadFile struct{}

type readFileParams struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// Name implements Tool.
func (ReadFile) Name() string { return "read_file" }

// Description implements Tool.
func (ReadFile) Description() string { return readFileDescription }

// Mutating implements Tool: read_file only reads.
func (ReadFile) Mutating() bool { return false }

// Schema implements Tool.
func (ReadFile) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"file path, relative to the workspace root"},` +
		`"offset":{"type":"integer","minimum":1,"description":"first line to show, 1-based (default 1)"},` +
		`"limit":{"type":"integer","minimum":1,"description":"number of lines to show (default 2000)"}},` +
		`"required":["path"],"additionalProperties":false}`)
}

// Run implements Tool. It records the whole file's content in env.Reads,
// even when only part of it is shown.
func (ReadFile) Run(ctx context.Context, env *Env, args json.RawMessage) (Result, error) {
	var p readFileParams
	if err := decodeArgs(args, &p); err != nil {
		return toolError("read_file: %v", err), nil
	}
	if p.Offset < 0 || p.Limit < 0 {
		return toolError("read_file: offset and limit must be positive"), nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	root, abs, err := env.resolveRead(p.Path)
	if err == nil {
		err = checkGitDir(root, abs)
	}
	if err != nil {
		return toolError("read_file: %v", err), nil
	}
	rel := env.shown(root, abs)
	data, err := env.files().ReadFile(abs)
	if err != nil {
		return readError("read_file", rel, err)
	}
	if isBinary(data) {
		return toolError("read_file %s: binary or non-UTF-8 file (%d bytes); it cannot be shown as text", rel, len(data)), nil
	}
	if env.Reads != nil {
		env.Reads.Record(abs, data)
	}
	text := strings.TrimPrefix(string(data), bom)
	if text == "" {
		return Result{Text: fmt.Sprintf("%s is empty.", rel), Summary: "read " + rel + " (empty)"}, nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	first := max(p.Offset, 1)
	if first > len(lines) {
		return toolError("read_file %s: offset %d is past the end of the file (%d lines)", rel, first, len(lines)), nil
	}
	limit := p.Limit
	if limit == 0 {
		limit = readDefaultLimit
	}
	last := min(first-1+limit, len(lines)) // 1-based, inclusive
	var b strings.Builder
	last, shortened := numberLines(&b, lines, first, last, env.maxOutput()-200)
	readNotes(&b, first, last, len(lines), shortened)
	return Result{Text: b.String(), Summary: fmt.Sprintf("read %s (lines %d-%d of %d)", rel, first, last, len(lines))}, nil
}

// readNotes says, after the lines first to last of total, which part
// was shown and where to read on, and how many lines were shortened.
func readNotes(b *strings.Builder, first, last, total, shortened int) {
	if last < total || first > 1 {
		fmt.Fprintf(b, "\n(showing lines %d-%d of %d", first, last, total)
		if last < total {
			fmt.Fprintf(b, "; to read more, call read_file with offset=%d", last+1)
		}
		b.WriteString(")\n")
	}
	if shortened > 0 {
		fmt.Fprintf(b, "(%d long lines were shortened to %d bytes)\n", shortened, readMaxLineBytes)
	}
}

// numberLines writes lines first to last (1-based, inclusive) to b,
// numbered, long ones shortened, within budget bytes (the first line
// always); it returns the last line written and how many were shortened.
func numberLines(b *strings.Builder, lines []string, first, last, budget int) (shown, shortened int) {
	for n := first; n <= last; n++ {
		line := strings.TrimRight(lines[n-1], "\r\n")
		if len(line) > readMaxLineBytes {
			line = truncate(line, readMaxLineBytes) + " [line shortened]"
			shortened++
		}
		entry := fmt.Sprintf("%6d\t%s\n", n, line)
		if b.Len()+len(entry) > budget && n > first {
			return n - 1, shortened
		}
		b.WriteString(entry)
	}
	return last, shortened
}

// readError turns a failed read of rel into a tool error the model can
// act on, or a Go error for an unexpected failure.
func readError(tool, rel string, err error) (Result, error) {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return toolError("%s %s: file not found", tool, rel), nil
	case isDirErr(err):
		return toolError("%s %s: is a directory; use list_files", tool, rel), nil
	case errors.Is(err, fs.ErrPermission):
		return toolError("%s %s: permission denied", tool, rel), nil
	case errors.Is(err, ErrNotRegular):
		return toolError("%s %s: %v", tool, rel, ErrNotRegular), nil
	case errors.Is(err, syscall.ELOOP):
		// A directory of the path became a symbolic link since it was
		// checked (ReadResolved): nothing was read.
		return toolError("%s %s: a directory of the path was replaced by a symbolic link while it was read; nothing was read", tool, rel), nil
	}
	return Result{}, fmt.Errorf("%s %s: %w", tool, rel, err)
}

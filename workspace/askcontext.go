package workspace

import (
	"cmp"
	"context"
	"fmt"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/loom-lsp/loom-lsp/internal/lsppos"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/mcp"
)

// What the user attaches to a prompt (files, ranges, folders, problems,
// text such as a terminal's output) is written into the user message
// after the prompt, each item in a <loom-context> block whose attributes
// say what it is, so that the model reads it delimited and a client that
// redraws the conversation (SplitPrompt) shows the items again as chips,
// not as the text sent.

// The kinds of ContextItem.
const (
	ContextFile        = "file"
	ContextDiagnostics = "diagnostics"
	ContextText        = "text"
	// ContextResource is a resource of one of the folder's MCP servers,
	// read through the server when the prompt is sent.
	ContextResource = "resource"
)

// Limits on attached context.
const (
	maxContextItem   = 64 << 10  // bytes of one item's text
	maxContextTotal  = 256 << 10 // bytes of all items
	maxFolderEntries = 200       // entries listed for an attached folder
)

// ContextItem is one thing attached to a prompt.
type ContextItem struct {
	// Kind is ContextFile, ContextDiagnostics or ContextText.
	Kind string
	// Label is what the chip says; a default is made from the item.
	Label string
	// Path (ContextFile) is an absolute path inside the folder: a file, or
	// a folder whose files are listed.
	Path string
	// Range (ContextFile), when set, is the part of the file attached.
	Range *lsppos.Range
	// Diagnostics (ContextDiagnostics) are the problems attached.
	Diagnostics []Diagnostic
	// Text (ContextText) is the text attached.
	Text string
	// Resource (ContextResource) names the MCP resource attached: a
	// server's URI, or its template and the values of its variables.
	Resource mcp.ResourceRef
}

// Diagnostic is one problem reported by the editor.
type Diagnostic struct {
	Path     string // absolute
	Range    lsppos.Range
	Severity string // error, warning, info or hint
	Message  string
	Source   string
	Code     string
}

// ContextChip is what SplitPrompt recovers of an attached item.
type ContextChip struct {
	Kind  string `json:"kind"`
	Label string `json:"label"`
	// Path is the attached file or folder (absolute), "" for the others.
	Path string `json:"path,omitempty"`
	// URI is the attached MCP resource's URI, "" for the others.
	URI string `json:"uri,omitempty"`
}

// PromptWithContext returns the user message for prompt with items
// attached, reading files from the open buffers of the overlay, else the
// disk, and MCP resources through their server. A file outside folder,
// unreadable, or binary is an error, and so is a resource its server
// cannot read.
func (h *Host) PromptWithContext(ctx context.Context, folder, prompt string, items []ContextItem) (string, error) {
	var b strings.Builder
	b.WriteString(prompt)
	total := 0
	for i, it := range items {
		body, label, attrs, err := h.renderItem(ctx, folder, it)
		if err != nil {
			return "", fmt.Errorf("context item %d (%s): %w", i+1, it.Kind, err)
		}
		if len(body) > maxContextItem {
			body = body[:maxContextItem] + "\n[… truncated]"
		}
		if total += len(body); total > maxContextTotal {
			return "", fmt.Errorf("the attached context is over %d KiB; attach less", maxContextTotal>>10)
		}
		fmt.Fprintf(&b, "\n\n<loom-context kind=\"%s\" label=\"%s\"", html.EscapeString(it.Kind), html.EscapeString(label))
		for _, a := range attrs {
			fmt.Fprintf(&b, " %s=\"%s\"", a[0], html.EscapeString(a[1]))
		}
		b.WriteString(">\n")
		b.WriteString(strings.TrimSuffix(strings.ReplaceAll(body, "</loom-context>", "<\\/loom-context>"), "\n"))
		b.WriteString("\n</loom-context>")
	}
	return b.String(), nil
}

// renderItem returns an item's text, its label and the attributes that
// identify it.
func (h *Host) renderItem(ctx context.Context, folder string, it ContextItem) (body, label string, attrs [][2]string, err error) {
	label = strings.TrimSpace(it.Label)
	switch it.Kind {
	case ContextResource:
		return h.renderResource(ctx, folder, label, it.Resource)
	case ContextText:
		return it.Text, cmp.Or(label, "text"), nil, nil
	case ContextDiagnostics:
		if len(it.Diagnostics) == 0 {
			return "", "", nil, fmt.Errorf("no diagnostics")
		}
		lines := diagnosticLines(folder, it.Diagnostics)
		return strings.Join(lines, "\n"), cmp.Or(label, plural(len(lines), "problem")), nil, nil
	case ContextFile:
		return h.renderFile(folder, it, label)
	}
	return "", "", nil, fmt.Errorf("unknown kind %q: want %s, %s, %s or %s", it.Kind, ContextFile, ContextDiagnostics, ContextText, ContextResource)
}

// renderResource reads an MCP resource through the folder's server,
// bounded to one item's size.
func (h *Host) renderResource(ctx context.Context, folder, label string, ref mcp.ResourceRef) (body, _ string, attrs [][2]string, err error) {
	f, err := h.Folder(folder)
	if err != nil {
		return "", "", nil, err
	}
	uri, body, err := f.mcp.ReadResource(ctx, ref, maxContextItem)
	if err != nil {
		return "", "", nil, err
	}
	if label == "" {
		label = ref.Server + ": " + uri
	}
	return body, label, [][2]string{{"server", ref.Server}, {"uri", uri}}, nil
}

// diagnosticLines words each diagnostic in a line, as compilers do:
// path:line:column: severity: message [source code].
func diagnosticLines(folder string, ds []Diagnostic) []string {
	var lines []string
	for _, d := range ds {
		line := fmt.Sprintf("%s:%d:%d: %s: %s", relTo(folder, d.Path), d.Range.Start.Line+1, d.Range.Start.Character+1, orDefault(d.Severity, "error"), d.Message)
		if d.Source != "" || d.Code != "" {
			line += " [" + strings.TrimSpace(d.Source+" "+d.Code) + "]"
		}
		lines = append(lines, line)
	}
	return lines
}

// renderFile renders a ContextFile item: a folder's listing, or the
// file's text as the user sees it (a range of it when given).
func (h *Host) renderFile(folder string, it ContextItem, label string) (body, _ string, attrs [][2]string, err error) {
	path, err := tools.Resolve(folder, it.Path)
	if err != nil {
		return "", "", nil, err
	}
	rel := relTo(folder, path)
	fi, err := os.Stat(path)
	if err != nil && !h.overlayHas(path) {
		return "", "", nil, err
	}
	if err == nil && fi.IsDir() {
		list, err := listFolder(path)
		return list, cmp.Or(label, rel+"/"), [][2]string{{"path", path}}, err
	}
	text, ok := h.documentText(path)
	if !ok {
		return "", "", nil, fmt.Errorf("%s is binary or unreadable", rel)
	}
	where := rel
	if it.Range != nil {
		if text, err = lsppos.Slice(text, *it.Range); err != nil {
			return "", "", nil, err
		}
		where = fmt.Sprintf("%s:%d-%d", rel, it.Range.Start.Line+1, it.Range.End.Line+1)
	}
	return text, cmp.Or(label, where), [][2]string{{"path", path}, {"where", where}}, nil
}

func (h *Host) overlayHas(path string) bool {
	_, _, ok := h.overlay.Document(path)
	return ok
}

// documentText is the file's text as the user sees it: the open buffer,
// else the disk; false for a binary or unreadable file.
func (h *Host) documentText(path string) (string, bool) {
	if text, _, ok := h.overlay.Document(path); ok {
		return text, true
	}
	b, err := os.ReadFile(path)
	if err != nil || strings.ContainsRune(string(b[:min(len(b), 8000)]), 0) {
		return "", false
	}
	return string(b), true
}

// listFolder lists the files under dir (relative, sorted), skipping .git,
// at most maxFolderEntries.
func listFolder(dir string) (string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(rel))
		}
		if len(names) > maxFolderEntries {
			return fs.SkipAll
		}
		return nil
	})
	sort.Strings(names)
	if len(names) > maxFolderEntries {
		names = append(names[:maxFolderEntries], "[… more files]")
	}
	return strings.Join(names, "\n"), err
}

func relTo(folder, path string) string {
	rel, err := filepath.Rel(folder, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	return filepath.ToSlash(rel)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

var (
	contextStart = regexp.MustCompile(`\n\n<loom-context ((?:[a-z]+="[^"]*" ?)+)>\n`)
	contextAttr  = regexp.MustCompile(`([a-z]+)="([^"]*)"`)
)

// SplitPrompt splits a user message made by PromptWithContext into the
// prompt the user typed and the chips of what was attached. A message
// without attachments is all prompt.
func SplitPrompt(content string) (prompt string, chips []ContextChip) {
	locs := contextStart.FindAllStringSubmatchIndex(content, -1)
	if len(locs) == 0 {
		return content, nil
	}
	for _, l := range locs {
		chip := ContextChip{}
		for _, a := range contextAttr.FindAllStringSubmatch(content[l[2]:l[3]], -1) {
			v := html.UnescapeString(a[2])
			switch a[1] {
			case "kind":
				chip.Kind = v
			case "label":
				chip.Label = v
			case "path":
				chip.Path = v
			case "uri":
				chip.URI = v
			}
		}
		chips = append(chips, chip)
	}
	return content[:locs[0][0]], chips
}

package workspace

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// The words users read, computed once here for every front end.

// PlanLine is the todo list on one line: "1/3 ✓ read · ▸ fix · ○ test";
// "(cleared)" for none.
func PlanLine(items []fsm.PlanItem) string {
	if len(items) == 0 {
		return "(cleared)"
	}
	done := 0
	parts := make([]string, len(items))
	for i, it := range items {
		mark := "○"
		switch it.Status {
		case fsm.PlanCompleted:
			mark = "✓"
			done++
		case fsm.PlanInProgress:
			mark = "▸"
		}
		step := strings.ReplaceAll(it.Step, "\n", " ")
		if len(step) > 60 {
			step = step[:60] + "…"
		}
		parts[i] = mark + " " + step
	}
	return fmt.Sprintf("%d/%d ", done, len(items)) + strings.Join(parts, " · ")
}

// ToolView is how a tool call shows in a client, worded here once for
// every front end (LSP's loom/toolCall and loom.history, ACP's
// tool_call).
type ToolView struct {
	// Kind is what the call does, in ACP's words: read, search, edit,
	// execute, fetch or other.
	Kind string `json:"kind"`
	// Title says the call in a sentence: "Read main.go", "Run `npm
	// test`", "Search for `TODO` in src" (ACP's tool_call title).
	Title string `json:"title"`
	// Label says it shortly, for a card: "main.go:10-40", "$ npm test",
	// "/TODO/ in src (*.go)"; the one-line arguments for another tool.
	Label string `json:"label"`
	// Path is the file (or folder) the call is about, as the model named
	// it (relative to the folder); "" for none.
	Path string `json:"path,omitempty"`
	// Line is the first line a read starts at; 0 for none.
	Line int `json:"line,omitempty"`
	// File is the file a read or an edit is about (Path), for a client
	// to open from the call; "" for a search, a listing or a command.
	File string `json:"file,omitempty"`
}

// toolArgs are the arguments of our tools that their words name.
type toolArgs struct {
	Path    string  `json:"path"`
	Pattern string  `json:"pattern"`
	Glob    string  `json:"glob"`
	Command string  `json:"command"`
	URL     string  `json:"url"`
	Query   string  `json:"query"`
	Offset  float64 `json:"offset"`
	Limit   float64 `json:"limit"`
}

// ViewTool words a call of tool name with its JSON arguments.
func ViewTool(name, arguments string) ToolView {
	a := parseToolArgs(arguments)
	v := ToolView{Kind: "other", Title: name, Label: clipWords(strings.Join(strings.Fields(arguments), " "), 200), Path: a.Path}
	if a.Offset > 0 {
		v.Line = int(a.Offset)
	}
	if words := toolWords[name]; words != nil {
		words(&v, a)
	}
	return v
}

// toolWords words the calls of our tools, by tool: kind, title, label
// and the file to open, over ViewTool's defaults (the name, the
// arguments). A tool without a row is shown by those.
var toolWords = map[string]func(v *ToolView, a toolArgs){
	"read_file": func(v *ToolView, a toolArgs) {
		v.Kind, v.Title, v.File = "read", "Read "+a.Path, a.Path
		if a.Path != "" {
			v.Label = a.Path + lineRange(int(a.Offset), int(a.Limit))
		}
	},
	"list_files": func(v *ToolView, a toolArgs) {
		v.Kind, v.Title = "read", "List files"+inWords(a.Path)
		v.Label = cmp.Or(a.Path, ".")
		if a.Pattern != "" {
			v.Label += " (" + a.Pattern + ")"
		}
	},
	"grep": func(v *ToolView, a toolArgs) {
		v.Kind, v.Title = "search", fmt.Sprintf("Search for `%s`", clipWords(a.Pattern, 60))+inWords(a.Path)
		if a.Pattern != "" {
			v.Label = grepLabel(a)
		}
	},
	"edit_file":  func(v *ToolView, a toolArgs) { editWords(v, "Edit ", a) },
	"write_file": func(v *ToolView, a toolArgs) { editWords(v, "Write ", a) },
	"bash": func(v *ToolView, a toolArgs) {
		v.Kind, v.Title = "execute", fmt.Sprintf("Run `%s`", clipWords(a.Command, 80))
		if a.Command != "" {
			v.Label = "$ " + clipRunes(a.Command, 200)
		}
	},
	"fetch": func(v *ToolView, a toolArgs) {
		v.Kind, v.Title = "fetch", "Fetch "+clipWords(a.URL, 120)
	},
	"web_search": func(v *ToolView, a toolArgs) {
		v.Kind, v.Title = "search", fmt.Sprintf("Search the web for `%s`", clipWords(a.Query, 80))
	},
}

// inWords is " in <path>" for a search or listing under path, "" for
// the whole workspace.
func inWords(path string) string {
	if path == "" || path == "." {
		return ""
	}
	return " in " + path
}

// editWords words an edit_file or write_file call: verb is "Edit " or
// "Write ".
func editWords(v *ToolView, verb string, a toolArgs) {
	v.Kind, v.Title, v.File = "edit", verb+a.Path, a.Path
	if a.Path != "" {
		v.Label = a.Path
	}
}

// Fields of arguments cut while the model streams them: the whole
// values, and a string cut off at the end.
var (
	wholeField = regexp.MustCompile(`"([A-Za-z_]+)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false)`)
	cutField   = regexp.MustCompile(`"([A-Za-z_]+)"\s*:\s*"((?:[^"\\]|\\.)*)$`)
)

// parseToolArgs reads the arguments a call's words name. Arguments cut
// off (still streaming) give their whole fields, and a string cut off at
// the end marked "…", so that the words grow with the arguments.
func parseToolArgs(arguments string) toolArgs {
	var a toolArgs
	if json.Unmarshal([]byte(arguments), &a) == nil || !strings.HasPrefix(strings.TrimSpace(arguments), "{") {
		return a
	}
	fields := map[string]json.RawMessage{}
	for _, m := range wholeField.FindAllStringSubmatch(arguments, -1) {
		fields[m[1]] = json.RawMessage(m[2])
	}
	if m := cutField.FindStringSubmatch(arguments); m != nil && fields[m[1]] == nil {
		var s string
		if json.Unmarshal([]byte(`"`+strings.TrimSuffix(m[2], `\`)+`"`), &s) == nil {
			fields[m[1]], _ = json.Marshal(s + "…")
		}
	}
	b, _ := json.Marshal(fields)
	_ = json.Unmarshal(b, &a)
	return a
}

// lineRange is a read's lines: ":10-40", ":10-", ":1-40" or "".
func lineRange(offset, limit int) string {
	switch {
	case offset > 0 && limit > 0:
		return fmt.Sprintf(":%d-%d", offset, offset+limit-1)
	case offset > 0:
		return fmt.Sprintf(":%d-", offset)
	case limit > 0:
		return fmt.Sprintf(":1-%d", limit)
	}
	return ""
}

// grepLabel is a search's label: "/TODO/ in src (*.go)".
func grepLabel(a toolArgs) string {
	label := "/" + a.Pattern + "/"
	if a.Path != "" {
		label += " in " + a.Path
	}
	if a.Glob != "" {
		label += " (" + a.Glob + ")"
	}
	return label
}

// clipWords is s on one line, cut at n runes with "…".
func clipWords(s string, n int) string {
	return clipRunes(strings.Join(strings.Fields(s), " "), n)
}

// clipRunes is s cut at n runes with "…".
func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

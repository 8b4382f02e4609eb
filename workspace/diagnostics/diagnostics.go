// Package diagnostics tells the model which problems its edits
// introduced, as the language servers see them.
//
// A [Source] gives the diagnostics of one file's text: the editor's own
// language servers (the VS Code extension and the Neovim plugin answer
// loom/diagnostics from the diagnostics they already show) or, where no
// editor answers, a language server loom starts itself ([Pool]: gopls,
// rust-analyzer, pyright, typescript-language-server, clangd, inside the
// commands' sandbox). [Introduced] compares the diagnostics of a file
// before and after a batch of edits, and [Format] writes what the model
// reads: errors first, warnings only when few, capped in size.
package diagnostics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrUnavailable is returned by a Source that cannot tell now: no
// language server for the file, one still starting, or one that did not
// answer within the wait. The model is told so ([Report.Unavailable]),
// unless the error is also [ErrNotServed].
var ErrUnavailable = errors.New("diagnostics not available")

// ErrNotServed (an [ErrUnavailable]) is returned for a file no language
// server checks (its type has none, or none is installed): nothing
// applies, and the model is told nothing.
var ErrNotServed = fmt.Errorf("%w: no language server checks it", ErrUnavailable)

// Why is what an [ErrUnavailable] error says after "diagnostics not
// available: " ("gopls did not answer in time").
func Why(err error) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, ErrUnavailable.Error()+": "); ok {
		return after
	}
	return msg
}

// Severity is an LSP diagnostic severity: 1 is the most severe.
type Severity int

// The LSP severities.
const (
	SeverityError   Severity = 1
	SeverityWarning Severity = 2
	SeverityInfo    Severity = 3
	SeverityHint    Severity = 4
)

// String is the severity's word.
func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInfo:
		return "info"
	case SeverityHint:
		return "hint"
	}
	return "error"
}

// ParseSeverity reads a severity's word ("error", "warning", "info",
// "hint").
func ParseSeverity(word string) (Severity, bool) {
	for s := SeverityError; s <= SeverityHint; s++ {
		if s.String() == word {
			return s, true
		}
	}
	return 0, false
}

// Diagnostic is one problem a language server reported in a file.
type Diagnostic struct {
	// Path is the file's absolute path.
	Path string `json:"path"`
	// Line and Col are 1-based (Col counts UTF-16 units, as LSP does).
	Line int `json:"line"`
	Col  int `json:"col"`
	// Severity is 0 when the server gave none (read as an error).
	Severity Severity `json:"severity,omitempty"`
	Source   string   `json:"source,omitempty"`
	Code     string   `json:"code,omitempty"`
	Message  string   `json:"message"`
}

// severity is d's severity, an error when the server gave none (as LSP
// clients read it).
func (d Diagnostic) severity() Severity {
	if d.Severity < SeverityError || d.Severity > SeverityHint {
		return SeverityError
	}
	return d.Severity
}

// key identifies a problem across an edit: its line moves when lines are
// added above it, its words do not.
func (d Diagnostic) key() string {
	return fmt.Sprintf("%d\x00%s\x00%s\x00%s", d.severity(), d.Source, d.Code, d.Message)
}

// Source gives the diagnostics of a file.
type Source interface {
	// Diagnostics returns the problems in the file at path (absolute)
	// whose text is text, waiting for the language server at most until
	// ctx ends. It returns an error wrapping ErrUnavailable when it cannot
	// tell.
	Diagnostics(ctx context.Context, path, text string) ([]Diagnostic, error)
}

// Introduced returns the problems of after that before did not have: a
// problem counts once per occurrence, whatever its line, so that a
// pre-existing one that only moved is not new.
func Introduced(before, after []Diagnostic) []Diagnostic {
	had := make(map[string]int, len(before))
	for _, d := range before {
		had[d.key()]++
	}
	var fresh []Diagnostic
	for _, d := range after {
		if k := d.key(); had[k] > 0 {
			had[k]--
			continue
		}
		fresh = append(fresh, d)
	}
	return fresh
}

// Report is what a batch of edits did to one file's problems.
type Report struct {
	// Path is the file's path as the model names it (relative to the
	// folder).
	Path string
	// New are the problems the edits introduced.
	New []Diagnostic
	// Before and After count the file's problems at the least severity
	// reported, before and after the edits.
	Before, After int
	// Unavailable, when set, says why the file's problems are not known
	// ("gopls did not answer in time"): New, Before and After are then
	// empty, and the model is told that it does not know.
	Unavailable string
}

// Limits bound what Format writes.
type Limits struct {
	// MinSeverity is the least severe kind reported (SeverityWarning:
	// errors and warnings).
	MinSeverity Severity
	// MaxWarnings is how many new warnings are listed when there is no
	// new error; with new errors, warnings are only counted.
	MaxWarnings int
	// MaxItems caps the problems listed in all; MaxBytes the text.
	MaxItems int
	MaxBytes int
}

// DefaultLimits are errors and warnings, at most 5 warnings, 20 items,
// 4 KiB.
var DefaultLimits = Limits{MinSeverity: SeverityWarning, MaxWarnings: 5, MaxItems: 20, MaxBytes: 4096}

// Filter keeps the problems at least as severe as min.
func Filter(ds []Diagnostic, min Severity) []Diagnostic {
	var kept []Diagnostic
	for _, d := range ds {
		if d.severity() <= min {
			kept = append(kept, d)
		}
	}
	return kept
}

// Format writes the reports for the model: one line per new problem
// ("main.go:12:5: error: undefined: x (compiler)"), errors first, and a
// short "no new problems in main.go" for a file whose edits introduced
// none. It returns "" when there is nothing to report.
func Format(reports []Report, lim Limits) string {
	if len(reports) == 0 {
		return ""
	}
	f := sortReports(reports, lim.MinSeverity)
	var b strings.Builder
	f.writeProblems(&b, lim)
	if len(f.clean) > 0 {
		fmt.Fprintf(&b, "[loom] no new problems in %s\n", strings.Join(f.clean, ", "))
	}
	for _, line := range f.unknown {
		b.WriteString(line + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// sorted is the reports' new problems sorted for Format.
type sorted struct {
	// errs and warns are the new errors, and the other problems at
	// least as severe as the minimum, each by file, line and column.
	errs, warns []Diagnostic
	// clean are the files with no new problem; unknown the lines said
	// for those without diagnostics.
	clean, unknown []string
	// paths maps a problem's path to its report's path, as shown.
	paths map[string]string
}

// sortReports sorts the reports' new problems at least as severe as min.
func sortReports(reports []Report, min Severity) sorted {
	f := sorted{paths: map[string]string{}}
	for _, r := range reports {
		if r.Unavailable != "" {
			f.unknown = append(f.unknown, fmt.Sprintf("[loom] diagnostics were not available for %s (%s): whether these edits introduced problems there is not known", r.Path, r.Unavailable))
			continue
		}
		n := len(f.errs) + len(f.warns)
		for _, d := range r.New {
			f.paths[d.Path] = r.Path
			switch {
			case d.severity() == SeverityError:
				f.errs = append(f.errs, d)
			case d.severity() <= min:
				f.warns = append(f.warns, d)
			}
		}
		if len(f.errs)+len(f.warns) == n {
			f.clean = append(f.clean, r.Path)
		}
	}
	byPlace := func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(f.paths[a.Path], f.paths[b.Path]), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	}
	slices.SortStableFunc(f.errs, byPlace)
	slices.SortStableFunc(f.warns, byPlace)
	return f
}

// writeProblems writes the count and the problems listed within lim:
// the errors, or the warnings when there are none and few enough; then
// how many were not listed.
func (f sorted) writeProblems(b *strings.Builder, lim Limits) {
	total := len(f.errs) + len(f.warns)
	if total == 0 {
		return
	}
	fmt.Fprintf(b, "[loom] the language server reports %s after these edits:\n", count(len(f.errs), len(f.warns)))
	list := f.errs
	if len(f.errs) == 0 && len(f.warns) <= lim.MaxWarnings {
		list = f.warns
	}
	listed := 0
	for _, d := range list {
		line := fmt.Sprintf("%s:%d:%d: %s: %s", f.paths[d.Path], d.Line, d.Col, d.severity(), oneLine(d.Message))
		if d.Source != "" {
			line += " (" + d.Source + ")"
		}
		if listed >= lim.MaxItems || b.Len()+len(line) > lim.MaxBytes {
			break
		}
		b.WriteString(line + "\n")
		listed++
	}
	if left := total - listed; left > 0 {
		fmt.Fprintf(b, "(%d more not listed)\n", left)
	}
}

// Summary is the short line shown to people: "2 new problems in
// main.go", "no new problems in main.go".
func Summary(reports []Report, lim Limits) string {
	var parts []string
	for _, r := range reports {
		n := len(Filter(r.New, lim.MinSeverity))
		switch {
		case r.Unavailable != "":
			parts = append(parts, "diagnostics not available for "+r.Path)
		case n == 0:
			parts = append(parts, "no new problems in "+r.Path)
		case n == 1:
			parts = append(parts, "1 new problem in "+r.Path)
		default:
			parts = append(parts, fmt.Sprintf("%d new problems in %s", n, r.Path))
		}
	}
	return strings.Join(parts, "; ")
}

func count(errs, warns int) string {
	var parts []string
	if errs > 0 {
		parts = append(parts, plural(errs, "new error"))
	}
	if warns > 0 {
		parts = append(parts, plural(warns, "new warning"))
	}
	return strings.Join(parts, " and ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

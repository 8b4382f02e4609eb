package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/diagnostics"
	"github.com/loom-lsp/loom-lsp/workspace/toolcall"
)

// DiagnosticsSource is an optional interface of an Editor whose client
// reports the diagnostics its own language servers publish (the VS Code
// extension and the Neovim plugin answer loom/diagnostics). loom then
// starts no language server of its own for the folder.
type DiagnosticsSource interface {
	// Diagnostics returns the problems the editor shows in the file at
	// path (absolute), waiting at most until ctx ends for its language
	// servers to have looked at the file's current text (after an edit).
	// It returns ErrUnsupported when the client cannot tell.
	Diagnostics(ctx context.Context, by DocumentCaller, path string, after bool) ([]diagnostics.Diagnostic, error)
}

// DiagnosticsNote is set on NoteDiagnostics: what a batch of edits did
// to its files' problems.
type DiagnosticsNote struct {
	// CallID is the call whose result carries the report to the model.
	CallID string
	// Summary is one line for people ("1 new problem in main.go").
	Summary string
	// New are the problems the edits introduced.
	New []diagnostics.Diagnostic
}

// diagBatch is the diagnostics bookkeeping of one tool batch: the
// problems of each edited file before the batch's first edit of it, and
// the call whose result reports them.
type diagBatch struct {
	src    diagnostics.Source
	wait   time.Duration
	limits diagnostics.Limits
	// reportAt is the batch's last edit call: its result carries the
	// report.
	reportAt string
	// before holds each edited file's problems before the batch touched
	// it; a file that had none known (no answer) is absent.
	before map[string][]diagnostics.Diagnostic
	// unavailable says why a file's problems before the batch are not
	// known, for a file a language server should have answered for.
	unavailable map[string]string
	// order lists the edited files in the order first edited, and texts
	// their texts after the batch's edits.
	order []string
	texts map[string]string
	// dir is the folder, for the calls' relative paths.
	dir string
}

// diagnosedTools are the tools whose edits are checked: they name the
// file they change in their "path" argument.
var diagnosedTools = map[string]bool{"edit_file": true, "write_file": true}

// newDiagBatch prepares the diagnostics of a batch, or returns nil when
// none apply: diagnostics off, review on (nothing lands before it is
// decided), no edit in the batch, or no source for the folder. It runs
// on the owner goroutine, where the batch is made (the settings are
// read there); priming the language server is left to the batch.
func (s *Conversation) newDiagBatch(a fsm.ExecuteTools) *diagBatch {
	if s.cfg.Tools.Diagnostics == config.DiagnosticsOff || a.Review {
		return nil
	}
	src := s.diagSource()
	if src == nil {
		return nil
	}
	var last string
	for i, c := range a.Calls {
		if diagnosedTools[c.Name] && a.Mutating[i] {
			last = c.ID
		}
	}
	if last == "" {
		return nil
	}
	lim := diagnostics.DefaultLimits
	if sev, ok := diagnostics.ParseSeverity(s.cfg.Tools.DiagnosticsSeverity); ok {
		lim.MinSeverity = sev
	}
	return &diagBatch{
		src: src, wait: s.cfg.Tools.DiagnosticsWait.Duration, limits: lim, reportAt: last,
		before: map[string][]diagnostics.Diagnostic{}, unavailable: map[string]string{}, texts: map[string]string{},
		dir: s.folder.dir,
	}
}

// prime gives loom's own language server the files the batch's calls
// name (reads and edits), starting it if needed, so that it is warm and
// knows the files' problems by the time an edit needs them. It runs on
// the batch's goroutine.
func (d *diagBatch) prime(env *tools.Env, calls []fsm.ToolCall) {
	if d == nil {
		return
	}
	pool, ok := d.src.(*diagnostics.Pool)
	if !ok {
		return
	}
	for _, c := range calls {
		rel := callPath(c.Arguments)
		if rel == "" {
			continue
		}
		path, err := tools.Resolve(d.dir, rel)
		if err != nil || !pool.Serves(path) {
			continue
		}
		if data, err := env.FileSource().ReadFile(path); err == nil {
			pool.Prime(path, string(data))
		}
	}
}

// diagSource is the editor's diagnostics when its client gives them,
// falling back to the folder's own language servers; nil when neither
// can.
func (s *Conversation) diagSource() diagnostics.Source {
	var pool diagnostics.Source
	if s.langServers != nil {
		pool = s.langServers
	}
	if ed, ok := s.folder.host.opts.Editor.(DiagnosticsSource); ok && !s.folder.editorDiagsUnsupported.Load() {
		return &editorDiags{s: s, ed: ed, pool: pool, asked: map[string]bool{}, ownServer: map[string]bool{}}
	}
	return pool
}

// editorDiags asks the editor, for one batch: the first question about a
// file is about its text before the batch's edits (answered at once),
// the next ones after them (the editor waits for its language servers).
// A client that cannot tell leaves the question to the folder's own
// language servers.
type editorDiags struct {
	s     *Conversation
	ed    DiagnosticsSource
	pool  diagnostics.Source
	asked map[string]bool
	// ownServer are the files the editor does not know (not open there):
	// loom's own language server answers for them, before and after.
	ownServer map[string]bool
}

func (e *editorDiags) Diagnostics(ctx context.Context, path, text string) ([]diagnostics.Diagnostic, error) {
	after := e.asked[path]
	e.asked[path] = true
	if !e.ownServer[path] {
		ds, err := e.ed.Diagnostics(ctx, e.s.caller(""), path, after)
		switch {
		case errors.Is(err, ErrUnsupported):
			e.s.folder.editorDiagsUnsupported.Store(true)
		case errors.Is(err, ErrDiagnosticsUnknown) && !after:
		default:
			return ds, err
		}
		e.ownServer[path] = true
	}
	if e.pool == nil {
		return nil, diagnostics.ErrNotServed
	}
	return e.pool.Diagnostics(ctx, path, text)
}

// ErrDiagnosticsUnknown is returned by DiagnosticsSource.Diagnostics
// for a file the editor's language servers do not look at (not open
// there): loom's own language server is asked instead.
var ErrDiagnosticsUnknown = errors.New("the editor has no diagnostics for this file")

// beforeEdit records the problems of the file call c is about to edit,
// the first time the batch edits it.
func (d *diagBatch) beforeEdit(ctx context.Context, env tools.FileSource, c fsm.ToolCall) {
	if d == nil || !diagnosedTools[c.Name] {
		return
	}
	rel := callPath(c.Arguments)
	if rel == "" {
		return
	}
	// Confined like the tools: nothing outside the folder is read for a
	// language server.
	path, err := tools.Resolve(d.dir, rel)
	if err != nil {
		return
	}
	if _, seen := d.texts[path]; seen {
		return
	}
	d.texts[path] = ""
	d.order = append(d.order, path)
	data, err := env.ReadFile(path)
	if err != nil {
		// A new file had no problems; the editor is asked about it only
		// after the edit.
		d.before[path] = nil
		if e, ok := d.src.(*editorDiags); ok {
			e.asked[path] = true
		}
		return
	}
	text := string(data)
	ctx, cancel := context.WithTimeout(ctx, d.wait)
	defer cancel()
	ds, err := d.src.Diagnostics(ctx, path, text)
	switch {
	case err == nil:
		d.before[path] = ds
	case !errors.Is(err, diagnostics.ErrNotServed):
		d.unavailable[path] = diagnostics.Why(err)
	}
}

// afterCall notes an applied edit, and for the batch's last edit call
// returns the report the model reads after its result ("" for none),
// with the note shown to people.
func (d *diagBatch) afterCall(ctx context.Context, c fsm.ToolCall, out toolcall.Outcome, rel func(string) string) (string, *toolcall.Diagnosed) {
	if d == nil {
		return "", nil
	}
	if e := out.Applied; e != nil {
		if _, ok := d.texts[e.Path]; !ok {
			d.order = append(d.order, e.Path)
		}
		d.texts[e.Path] = e.NewText
	}
	if c.ID != d.reportAt {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(ctx, d.wait)
	defer cancel()
	var reports []diagnostics.Report
	for _, path := range d.order {
		before, known := d.before[path]
		text := d.texts[path]
		if text == "" {
			continue
		}
		if !known {
			// No answer before the edit, where one was due: the model
			// is told it does not know, not left to take silence for
			// "no new problems".
			if why, due := d.unavailable[path]; due {
				reports = append(reports, diagnostics.Report{Path: rel(path), Unavailable: why})
			}
			continue
		}
		after, err := d.src.Diagnostics(ctx, path, text)
		if err != nil {
			if !errors.Is(err, diagnostics.ErrNotServed) {
				reports = append(reports, diagnostics.Report{Path: rel(path), Unavailable: diagnostics.Why(err)})
			}
			continue
		}
		reports = append(reports, diagnostics.Report{
			Path: rel(path), New: diagnostics.Introduced(before, after),
			Before: len(diagnostics.Filter(before, d.limits.MinSeverity)), After: len(diagnostics.Filter(after, d.limits.MinSeverity)),
		})
	}
	if len(reports) == 0 {
		return "", nil
	}
	note := &toolcall.Diagnosed{Summary: diagnostics.Summary(reports, d.limits)}
	for _, r := range reports {
		note.New = append(note.New, diagnostics.Filter(r.New, d.limits.MinSeverity)...)
	}
	return diagnostics.Format(reports, d.limits), note
}

// callPath is the "path" argument of a call, "" when it has none.
func callPath(args string) string {
	var p struct {
		Path string `json:"path"`
	}
	if json.Unmarshal([]byte(args), &p) != nil {
		return ""
	}
	return p.Path
}

// relPath names path as the model does, relative to the folder.
func (s *Conversation) relPath(path string) string {
	if r, err := filepath.Rel(s.folder.dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return path
}

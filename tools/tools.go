// Package tools holds the agent's tools (read_file, list_files, grep,
// edit_file, write_file, bash), their registry, and the confinement of
// every path to the workspace root.
//
// Tools never write files themselves: edit_file and write_file compute an
// [Edit] that the workspace applies to the editor buffer or, through its
// one writer (workspace/worktree), to disk. Only bash has side effects of its own.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools/elicit"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// Tool is one function the model may call.
type Tool interface {
	// Name is the tool's unique name, as the model calls it.
	Name() string
	// Description is the text the model reads to decide how to call it.
	Description() string
	// Schema is the JSON Schema of the params object.
	Schema() json.RawMessage
	// Mutating reports whether the tool may change the workspace: such
	// tools run one at a time and trigger the post-tool hook.
	Mutating() bool
	// Run executes one call. A failure the model can act on is a Result
	// with IsError set (text "tool error: …"); only a broken environment is
	// a Go error. It honours ctx: when ctx is done it returns promptly with
	// ctx's error.
	Run(ctx context.Context, env *Env, args json.RawMessage) (Result, error)
}

// Result is the outcome of one tool call.
type Result struct {
	// Text is what the model reads.
	Text string
	// IsError marks a tool error the model can act on; Text then starts
	// with "tool error: ".
	IsError bool
	// Summary is one line for the UI.
	Summary string
	// Edit is set by edit_file and write_file on success; the workspace
	// applies it. Nil for the other tools.
	Edit *Edit
	// ExitCode is the exit status of a command that ran to its end (bash);
	// nil for the other tools and for a command killed or not run.
	ExitCode *int
	// Blocked, for bash, says what the sandbox kept the command from
	// doing, as far as its output tells ("write to /home/u/.bashrc");
	// "" when nothing points at the sandbox.
	Blocked string
}

// FileSource is where tools read text: the editor overlay when the file
// is open there, else disk.
type FileSource interface {
	// ReadFile returns the content of the file at absPath. A missing file
	// is an error satisfying errors.Is(err, fs.ErrNotExist).
	ReadFile(absPath string) ([]byte, error)
}

// DiskFiles is the FileSource that reads files from disk.
type DiskFiles struct{}

// ReadFile reads absPath from disk: a path Resolve gave, read without
// following a symlink on the way ([ReadResolved]).
func (DiskFiles) ReadFile(absPath string) ([]byte, error) { return ReadResolved(absPath) }

// Defaults used when the matching Env field is zero.
const (
	DefaultBashTimeout    = 2 * time.Minute
	DefaultBashMaxTimeout = 10 * time.Minute
	DefaultMaxOutputBytes = 64 << 10
)

// Env is what a tool run may touch. One Env serves a whole session; tools
// only read its fields.
type Env struct {
	// Root is the absolute workspace root, symlinks resolved.
	Root string
	// Files is where tools read text; nil means DiskFiles.
	Files FileSource
	// Reads records what the model last read, for staleness checks. It
	// must not be nil for edit_file and write_file.
	Reads *ReadTracker
	// BashTimeout is bash's default timeout; BashMaxTimeout the largest a
	// call may ask for. Zero means DefaultBashTimeout, DefaultBashMaxTimeout.
	BashTimeout, BashMaxTimeout time.Duration
	// ScrubEnv lists extra environment variable names removed for bash
	// (the configured api_key_env). Names ending in _API_KEY are always
	// removed.
	ScrubEnv []string
	// MaxOutputBytes caps the text of one result; zero means
	// DefaultMaxOutputBytes.
	MaxOutputBytes int
	// ReadRoots are folders outside Root the read tools may read, by
	// absolute path (readroots.go): absolute, symlinks resolved, checked
	// by CheckReadRoots. Nothing is written there.
	ReadRoots []string
	// Sandbox, when not nil, confines bash's commands (package sandbox);
	// nil runs them with the user's full permissions (tools.sandbox =
	// "off", or a command the user approved to rerun outside it).
	Sandbox *sandbox.Sandbox
	// Progress, when not nil, receives short progress messages, only ever
	// from the tool's goroutine: bash's is the latest line its command
	// printed (one line, at most ProgressLineMax bytes), sent when it
	// changed, at most every half second.
	Progress func(msg string)
	// Elicit, when not nil, asks the user a question an MCP server put
	// mid-call (elicitation, form or URL mode) and returns what to send
	// back: an accepted form's content is checked against its schema.
	// It records the exchange (an fsm.Elicited event). An error: no
	// answer came (timeout, cancel); send "cancel". Nil: no one to ask.
	Elicit func(ctx context.Context, req elicit.Request) (elicit.Result, error)
}

// FileSource is where the tools read text (Files, or the disk).
func (e *Env) FileSource() FileSource { return e.files() }

func (e *Env) files() FileSource {
	if e.Files == nil {
		return DiskFiles{}
	}
	return e.Files
}

func (e *Env) maxOutput() int {
	if e.MaxOutputBytes <= 0 {
		return DefaultMaxOutputBytes
	}
	return e.MaxOutputBytes
}

func (e *Env) progress(msg string) {
	if e.Progress != nil {
		e.Progress(msg)
	}
}

// Registry is an immutable set of tools, by name.
type Registry struct {
	byName map[string]Tool
	sorted []Tool
}

// NewRegistry returns a registry of tools. It panics on a duplicate or
// empty name, which is a programming error.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{byName: make(map[string]Tool, len(tools))}
	for _, t := range tools {
		name := t.Name()
		if name == "" {
			panic("tools: tool with empty name")
		}
		if _, dup := r.byName[name]; dup {
			panic("tools: duplicate tool " + name)
		}
		r.byName[name] = t
		r.sorted = append(r.sorted, t)
	}
	sort.Slice(r.sorted, func(i, j int) bool { return r.sorted[i].Name() < r.sorted[j].Name() })
	return r
}

// DefaultRegistry returns a registry of the built-in tools: the six that act on the workspace, and update_plan and propose_plan, which the state machine runs.
func DefaultRegistry() *Registry {
	return NewRegistry(ReadFile{}, ListFiles{}, Grep{}, EditFile{}, WriteFile{}, Bash{}, UpdatePlan{}, ProposePlan{})
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// All returns the tools sorted by name. The slice is a copy.
func (r *Registry) All() []Tool { return append([]Tool(nil), r.sorted...) }

// Specs returns the fsm's view of the tools, for fsm.Config.Tools.
func (r *Registry) Specs() map[string]fsm.ToolSpec {
	m := make(map[string]fsm.ToolSpec, len(r.sorted))
	for _, t := range r.sorted {
		m[t.Name()] = fsm.ToolSpec{Mutating: t.Mutating()}
	}
	return m
}

// toolError returns a Result the model reads as a failure.
func toolError(format string, args ...any) Result {
	msg := fmt.Sprintf(format, args...)
	return Result{Text: "tool error: " + msg, IsError: true, Summary: firstLine(msg)}
}

// errArgs is returned by decodeArgs for arguments the model got wrong.
var errArgs = errors.New("invalid arguments")

// decodeArgs strictly decodes the model's JSON arguments into v. Empty
// arguments and null mean {}.
func decodeArgs(args json.RawMessage, v any) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", errArgs, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: trailing data after the JSON object", errArgs)
	}
	return nil
}

func firstLine(s string) string {
	if i := bytes.IndexByte([]byte(s), '\n'); i >= 0 {
		s = s[:i]
	}
	return truncate(s, 200)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

package agenthooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/reap"

	"github.com/loom-lsp/loom-lsp/internal/gitcmd"
)

// Input is what a hook is told of the moment it runs for; [Input.JSON]
// shapes it as the hook's format defines.
type Input struct {
	SessionID      string
	TranscriptPath string
	// Cwd is the workspace folder.
	Cwd   string
	Event Event
	// Tool is the loom tool's name (tool events); ToolInput its
	// arguments; ToolUseID the call's id.
	Tool      string
	ToolInput json.RawMessage
	ToolUseID string
	// ToolOutput and ToolFailed are its result (PostToolUse).
	ToolOutput string
	ToolFailed bool
	// Prompt is the user's prompt (UserPromptSubmit).
	Prompt string
	// StopHookActive is set when a Stop hook already continued this turn.
	StopHookActive bool
	// LastMessage is the model's last text (Stop).
	LastMessage string
	// Source is SessionStart's source (startup, resume, clear) or
	// PreCompact's trigger (manual, auto).
	Source string
	// Message is a Notification's text.
	Message string
	// Now is the input's timestamp.
	Now time.Time
}

// JSON is the input as hook h's format has it: Claude Code's snake_case
// fields (Codex's and loom's are the same; VS Code adds its camelCase
// hookEventName, sessionId and timestamp), or the Copilot CLI's camelCase
// ones.
func (in Input) JSON(h *Hook) []byte {
	m := map[string]any{
		"session_id":      in.SessionID,
		"cwd":             in.Cwd,
		"hook_event_name": string(in.Event),
		"permission_mode": "default",
	}
	if in.TranscriptPath != "" {
		m["transcript_path"] = in.TranscriptPath
	}
	toolInput := in.toolInput()
	in.eventFields(m, h, toolInput)
	switch h.Format {
	case FormatVSCode:
		m["hookEventName"] = string(in.Event)
		m["sessionId"] = in.SessionID
		m["timestamp"] = in.Now.UTC().Format(time.RFC3339Nano)
	case FormatCopilot:
		in.copilotFields(m, h, toolInput)
	}
	data, _ := json.Marshal(m)
	return data
}

// eventFields sets the fields of the input's event, in Claude Code's
// words.
func (in Input) eventFields(m map[string]any, h *Hook, toolInput map[string]any) {
	switch in.Event {
	case PreToolUse, PostToolUse:
		m["tool_name"] = InputToolName(in.Tool, h.Format)
		m["tool_input"] = toolInput
		m["tool_use_id"] = in.ToolUseID
		if in.Event == PostToolUse {
			m["tool_response"] = in.toolResponse(toolInput)
		}
	case UserPromptSubmit:
		m["prompt"] = in.Prompt
	case Stop:
		m["stop_hook_active"] = in.StopHookActive
		m["last_assistant_message"] = in.LastMessage
	case SessionStart:
		m["source"] = in.Source
	case PreCompact:
		m["trigger"] = in.Source
		m["custom_instructions"] = ""
	case Notification:
		m["message"] = in.Message
		m["title"] = "loom"
	}
}

// copilotFields sets the Copilot CLI's camelCase fields: a timestamp in
// milliseconds, the tool's name, arguments (as a JSON string) and
// result, and a session's source in its words.
func (in Input) copilotFields(m map[string]any, h *Hook, toolInput map[string]any) {
	m["timestamp"] = in.Now.UnixMilli()
	if in.Event == PreToolUse || in.Event == PostToolUse {
		args, _ := json.Marshal(toolInput)
		m["toolName"] = InputToolName(in.Tool, h.Format)
		m["toolArgs"] = string(args)
		if in.Event == PostToolUse {
			result := "success"
			if in.ToolFailed {
				result = "failure"
			}
			m["toolResult"] = map[string]any{"resultType": result, "textResultForLlm": in.ToolOutput}
		}
	}
	if in.Event == SessionStart {
		m["source"] = map[string]string{"startup": "new", "clear": "new", "resume": "resume"}[in.Source]
	}
}

// toolInput is the call's arguments, with file_path (absolute, as Claude
// Code's tools name a file) beside loom's relative path.
func (in Input) toolInput() map[string]any {
	args := map[string]any{}
	if len(in.ToolInput) > 0 {
		_ = json.Unmarshal(in.ToolInput, &args)
	}
	if p, ok := args["path"].(string); ok && p != "" {
		if !filepath.IsAbs(p) {
			p = filepath.Join(in.Cwd, p)
		}
		args["file_path"] = filepath.Clean(p)
	}
	return args
}

func (in Input) toolResponse(args map[string]any) map[string]any {
	r := map[string]any{"output": in.ToolOutput, "success": !in.ToolFailed}
	if in.Tool == "bash" {
		r["stdout"] = in.ToolOutput
		r["stderr"] = ""
		r["interrupted"] = false
	}
	if p, ok := args["file_path"]; ok {
		r["filePath"] = p
	}
	return r
}

// Runner runs hooks as the agent's commands run.
type Runner struct {
	// Wrap puts a command in the sandbox commands run in; nil runs it
	// unconfined (tools.sandbox = "off").
	Wrap func(*exec.Cmd) error
	// Environ is the environment, API keys already removed
	// (tools.CommandEnviron).
	Environ []string
	// MaxOutput bounds what is kept of each of stdout and stderr.
	MaxOutput int
}

// DefaultMaxOutput is Runner.MaxOutput's default.
const DefaultMaxOutput = 64 << 10

// hookWaitDelay bounds the wait for the output pipes once the hook was
// killed or exited (a background child holding them).
const hookWaitDelay = 2 * time.Second

// Result is one hook's run.
type Result struct {
	Hook *Hook
	Outcome
	// ExitCode is the hook's exit status (-1 when killed or not started).
	ExitCode int
	TimedOut bool
	Elapsed  time.Duration
}

// Run runs h with in on its stdin, and reads what it said. It never
// fails: a hook that cannot start, crashes, times out or says something
// unreadable has Outcome.Problem set, and decides nothing.
func (r Runner) Run(ctx context.Context, h *Hook, in Input) Result {
	res := Result{Hook: h, ExitCode: -1}
	if err := ctx.Err(); err != nil {
		res.Problem = "not run: " + err.Error()
		return res
	}
	runCtx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	max := r.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	stdout, stderr := &capped{max: max}, &capped{max: max}
	cmd := exec.CommandContext(runCtx, gitcmd.Program("bash"), "-c", h.Command)
	cmd.Dir = h.Dir
	marker := reap.NewMarker()
	env := append([]string(nil), r.Environ...)
	env = append(env, "CLAUDE_PROJECT_DIR="+in.Cwd, "LOOM_HOOK_EVENT="+string(h.Event), reap.Env(marker))
	for k, v := range h.Env {
		if !strings.HasSuffix(strings.ToUpper(k), "_API_KEY") {
			env = append(env, k+"="+v)
		}
	}
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(in.JSON(h))
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = tools.CommandProcAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = hookWaitDelay
	if r.Wrap != nil {
		if err := r.Wrap(cmd); err != nil {
			res.Problem = "not run: the sandbox: " + err.Error()
			return res
		}
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		res.Problem = "not run: " + err.Error()
		return res
	}
	waitErr := cmd.Wait()
	killGroup(cmd.Process.Pid)
	reap.KillMarked(marker, false)
	res.Elapsed = time.Since(start)
	res.ExitCode = cmd.ProcessState.ExitCode()
	switch {
	case ctx.Err() != nil:
		res.Problem = "cancelled; killed"
		return res
	case runCtx.Err() != nil:
		res.TimedOut = true
		res.Problem = fmt.Sprintf("timed out after %v; killed", h.Timeout)
		return res
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		res.Problem = "failed: " + waitErr.Error()
		return res
	}
	res.Outcome = Parse(h, in.Event, res.ExitCode, stdout.String(), stderr.String())
	return res
}

func killGroup(pgid int) error {
	if pgid <= 1 {
		return nil
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// capped keeps the first max bytes written to it and counts the rest.
type capped struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	more int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - len(c.buf)
	if room >= len(p) {
		c.buf = append(c.buf, p...)
	} else {
		c.buf = append(c.buf, p[:max(room, 0)]...)
		c.more += int64(len(p) - max(room, 0))
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.ToValidUTF8(string(c.buf), "\uFFFD")
	if c.more > 0 {
		s += fmt.Sprintf("\n[… %d more bytes cut]", c.more)
	}
	return s
}

// LoomInput maps a PreToolUse hook's rewritten input back onto loom's
// arguments for the call whose arguments were original: the hooks were
// given file_path (absolute, as Claude Code's tools name a file) beside
// loom's path, so a file_path the hook changed becomes the call's path
// (relative to cwd when inside it; a path outside stays absolute, and
// the tool refuses it as it refuses the model's), and file_path is
// dropped. Everything else is taken as the hook wrote it: the tool checks
// its arguments as it checks the model's.
func LoomInput(original, updated json.RawMessage, cwd string) (json.RawMessage, error) {
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(updated))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil || args == nil {
		return nil, fmt.Errorf("the rewritten input is not a JSON object")
	}
	given := Input{Cwd: cwd, ToolInput: original}.toolInput()
	if _, had := given["file_path"]; had {
		if fp, ok := args["file_path"].(string); ok && fp != given["file_path"] {
			p := filepath.Clean(fp)
			if rel, err := filepath.Rel(cwd, p); err == nil && filepath.IsAbs(p) && rel != ".." && !strings.HasPrefix(rel, "../") {
				p = filepath.ToSlash(rel)
			}
			args["path"] = p
		} else if _, ok := args["path"]; !ok {
			args["path"] = given["path"]
		}
		delete(args, "file_path")
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // a command's > stays as the hook wrote it
	if err := enc.Encode(args); err != nil {
		return nil, err
	}
	return bytes.TrimRight(out.Bytes(), "\n"), nil
}

package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/agentfiles"
	"github.com/loom-lsp/loom-lsp/workspace/agenthooks"
	"github.com/loom-lsp/loom-lsp/workspace/toolcall"
)

// Agent hooks (package agenthooks reads and runs them) at their points
// of a conversation: what they said is stepped as fsm.HooksDecided, so
// that the journal keeps it and a replay, rewind or resume never runs a
// hook again. With no hooks, none of this costs anything: folderHooks is
// nil and every call site returns at once.

// folderHooks is what the folder's conversations need to run its hooks,
// published by the folder on each configuration load; any goroutine
// reads it.
type folderHooks struct {
	set    *agenthooks.Set
	gate   agenthooks.Gate
	runner agenthooks.Runner
	// repoRunner runs the repository's hooks: runner, but with no
	// network under tools.bash = "ask" (see loadHooks).
	repoRunner agenthooks.Runner
	// off holds the repository's hooks back whatever the gate says
	// (tools.bash = "deny", or "ask" with no sandbox): why, "" when not.
	off string
	// told are the hooks whose holding back was said, by name and why.
	told *sync.Map
}

// hookFiles names the notice's subject.
const hookFilesWords = "agent hooks"

// hookLoader loads the agent hooks of a folder (its own and the
// user's), decides which of the repository's may run (trust, bound to
// content), says which were not taken, records them as trusted
// (loom.trust) and names the files that hold them. It knows the folder
// only by its directory, the user only by the home directory and the
// trust file, and tells them through notify. Owned by the folder's
// goroutine.
type hookLoader struct {
	dir string
	// home is the user's home directory; trustFile the file of the
	// folders the user trusted ("": none).
	home      func() string
	trustFile string
	// trustHow is the front end's words for trusting a folder (nil: the
	// default).
	trustHow func() string
	log      *slog.Logger
	notify   func(Notification)
	// notice is the notice about the hooks last shown.
	notice string
}

// userDir is the directory of the user's hooks and trust records.
func (l *hookLoader) userDir() string {
	if l.trustFile == "" {
		return ""
	}
	return filepath.Dir(l.trustFile)
}

// load reads the hooks and returns those to publish (nil: none defined)
// and whether Stop hooks are among them; a notice names the files not
// taken and the hooks held back, once per change.
func (l *hookLoader) load(cfg config.Config, env tools.Env) (fh *folderHooks, stopHooks bool) {
	userDir := l.userDir()
	set, problems := agenthooks.Load(l.dir, l.home(), userDir)
	if set.Empty() {
		l.say(problemLines(problems))
		return nil, false
	}
	gate := agenthooks.Gate{Folder: l.dir, Trusted: cfg.Vouched()}
	if gate.Trusted {
		gate.Recorded = l.recorded(agenthooks.TrustFile(userDir), set)
	}
	fh = &folderHooks{set: set, gate: gate, told: &sync.Map{}}
	fh.runner = agenthooks.Runner{Environ: tools.CommandEnviron(env.ScrubEnv)}
	if env.Sandbox != nil {
		fh.runner.Wrap = env.Sandbox.Wrap
	}
	fh.repoRunner = fh.runner
	fh.off = repoHooksOff(cfg.Tools.Bash, env.Sandbox != nil)
	if cfg.Tools.Bash == config.PolicyAsk {
		fh.gate.Unresolved = `commands need approval here (tools.bash = "ask"): name its script plainly (as "$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh) and trust the folder again, or allow commands`
	}
	if cfg.Tools.Bash == config.PolicyAsk && env.Sandbox != nil {
		// Trust binds a repository hook's definition and the files its
		// command line names, not what those run (a script it sources, a
		// Makefile, a formatter's config): the agent may have shaped
		// them without asking anyone. Under "ask" nothing the agent
		// shaped runs with the network unless the user approved that
		// run, so the repository's hooks run with none.
		fh.repoRunner.Wrap = env.Sandbox.Offline().Wrap
	}
	lines := problemLines(problems)
	for _, h := range set.Hooks {
		if ok, why := fh.admit(h); !ok {
			fh.told.Store(h.Name()+"\x00"+why, true)
			lines = append(lines, "  "+h.Name()+": held back: "+why+l.heldHow(why))
		}
	}
	l.say(lines)
	return fh, set.Has(agenthooks.Stop)
}

// recorded are the fingerprints of the trusted folder's hooks recorded
// in file; a trusted folder seen for the first time has its hooks
// recorded as they are, as its settings are (config.Trust).
func (l *hookLoader) recorded(file string, set *agenthooks.Set) map[string]bool {
	fps, recorded, err := agenthooks.ReadTrusted(file, l.dir)
	current := set.Fingerprints(l.dir)
	switch {
	case err != nil:
		l.log.Warn("trusted hooks unreadable", "err", err)
	case !recorded || file == "":
		if file != "" {
			if err := agenthooks.RecordTrusted(file, l.dir, current); err != nil {
				l.log.Warn("cannot record the trusted hooks", "err", err)
			}
		}
		fps = map[string]bool{}
		for _, fp := range current {
			fps[fp] = true
		}
	}
	return fps
}

// heldHow says how the user runs a hook held back for why: by trusting
// the folder, in the front end's own words (loom-lsp trust, /trust, the
// Trust command).
func (l *hookLoader) heldHow(why string) string {
	if !strings.Contains(why, "trust") {
		return ""
	}
	how := config.DefaultTrustHow
	if l.trustHow != nil {
		if h := l.trustHow(); h != "" {
			how = h
		}
	}
	return "; to run it, trust the folder: " + how
}

func problemLines(problems []agentfiles.Problem) []string {
	lines := make([]string, 0, len(problems))
	for _, p := range problems {
		lines = append(lines, "  "+p.String())
	}
	return lines
}

// say notifies the hooks notice when it changed.
func (l *hookLoader) say(lines []string) {
	notice := ""
	if len(lines) > 0 {
		notice = hookFilesWords + " not run:\n" + strings.Join(lines, "\n")
	}
	if notice != "" && notice != l.notice {
		l.notify(Notification{Kind: NoteInfo, Text: notice, Visible: true})
	}
	l.notice = notice
}

// files are the hook files the watcher watches as configuration: a
// change reloads the hooks.
func (l *hookLoader) files() []string {
	return agenthooks.Files(l.dir, l.home(), l.userDir())
}

// HookStatus is one agent hook in loom.status.
type HookStatus struct {
	// Hook names it (file:line, event, command); Scope is "repository"
	// or "user".
	Hook  string `json:"hook"`
	Scope string `json:"scope"`
	// Held says why it does not run now, "" when it runs.
	Held string `json:"held,omitempty"`
}

// hookStatus lists the hooks fh and whether each runs now.
func hookStatus(fh *folderHooks) []HookStatus {
	if fh == nil {
		return nil
	}
	out := make([]HookStatus, 0, len(fh.set.Hooks))
	for _, h := range fh.set.Hooks {
		_, why := fh.admit(h)
		out = append(out, HookStatus{Hook: h.Name(), Scope: h.Scope, Held: why})
	}
	return out
}

// trust records the repository's hooks as they are now (their
// definitions and the files they run) as trusted, for loom.trust.
func (l *hookLoader) trust() error {
	if l.trustFile == "" {
		return nil
	}
	userDir := l.userDir()
	set, _ := agenthooks.Load(l.dir, l.home(), userDir)
	return agenthooks.RecordTrusted(agenthooks.TrustFile(userDir), l.dir, set.Fingerprints(l.dir))
}

// loadHooks loads and publishes the folder's hooks; on its goroutine.
func (f *Folder) loadHooks(cfg config.Config, env tools.Env) {
	fh, stop := f.hookLoad.load(cfg, env)
	f.hooks.Store(fh)
	f.next.agent.stopHooks = stop
}

// repoHooksOff says why a repository's hooks are held back under the
// commands policy bash, "" when they may run: never under "deny"; under
// "ask" only sandboxed (they run what the agent may have edited, and no
// one approves their runs).
func repoHooksOff(bash config.Policy, sandboxed bool) string {
	switch {
	case bash == config.PolicyDeny:
		return `commands are off here (tools.bash = "deny")`
	case bash == config.PolicyAsk && !sandboxed:
		return `commands need approval here (tools.bash = "ask") and the sandbox is off: a repository's hook may run files the agent edited`
	}
	return ""
}

// runnerFor is the runner h runs with.
func (fh *folderHooks) runnerFor(h *agenthooks.Hook) agenthooks.Runner {
	if h.Scope == agenthooks.ScopeRepository {
		return fh.repoRunner
	}
	return fh.runner
}

// admit decides whether h runs now.
func (fh *folderHooks) admit(h *agenthooks.Hook) (bool, string) {
	if h.Scope == agenthooks.ScopeRepository && fh.off != "" {
		return false, fh.off
	}
	return fh.gate.Admit(h)
}

// said reports whether a live report made decision d, and the reasons.
func said(reports []fsm.HookReport, d agenthooks.Decision) (bool, string) {
	var reasons []string
	for _, r := range reports {
		if r.Held == "" && r.Problem == "" && r.Decision == string(d) {
			reasons = append(reasons, r.Reason)
		}
	}
	return len(reasons) > 0, strings.Join(reasons, "; ")
}

// PreToolUse runs the PreToolUse hooks of call c, and steps what they
// said; a rewritten input is taken as the machine takes it (fsm.Rewrite).
func (r callRun) PreToolUse(ctx context.Context, turn uint64, c fsm.ToolCall) toolcall.Hooked {
	s, b := r.s, r.b
	hc := toolcall.Hooked{Call: c}
	fh := s.hooks.hooksFor(agenthooks.PreToolUse)
	if fh == nil {
		return hc
	}
	in := agenthooks.Input{Tool: c.Name, ToolInput: json.RawMessage(c.Arguments), ToolUseID: c.ID}
	reports := s.hooks.run(ctx, fh, agenthooks.PreToolUse, c.Name, in)
	if len(reports) == 0 {
		return hc
	}
	var same string
	for i, r := range reports {
		if r.Input == "" {
			continue
		}
		if same == "" {
			// The model's arguments as the rewrites are spelled: a hook
			// that gives them back unchanged rewrote nothing.
			canon, _ := agenthooks.LoomInput(json.RawMessage(c.Arguments), json.RawMessage(c.Arguments), s.folder.dir)
			same = string(canon)
		}
		// The hook wrote its format's input (file_path beside path):
		// loom's arguments again.
		input, err := agenthooks.LoomInput(json.RawMessage(c.Arguments), json.RawMessage(r.Input), s.folder.dir)
		if err != nil {
			reports[i].Input, reports[i].Problem = "", err.Error()
			continue
		}
		reports[i].Input = string(input)
		if reports[i].Input == same {
			reports[i].Input = ""
		}
	}
	if !r.stepTaken(ctx, fsm.HooksDecided{Turn: turn, Event: fsm.HookPreToolUse, CallID: c.ID, Hooks: reports}) {
		hc.Done = true
		return hc
	}
	if deny, _ := said(reports, agenthooks.Deny); deny {
		hc.Done = true // the machine completed the call
		return hc
	}
	if input, _ := fsm.Rewrite(reports); input != "" && input != c.Arguments {
		hc.Call.Arguments, hc.From = input, c.Arguments
	}
	ask, why := said(reports, agenthooks.Ask)
	if !ask {
		return hc
	}
	detail := hc.Call.Arguments
	var args struct {
		Command string `json:"command"`
	}
	if json.Unmarshal([]byte(hc.Call.Arguments), &args) == nil && args.Command != "" {
		detail = args.Command
	}
	a := Approval{Folder: s.folder.dir, Turn: turn, Tool: c.Name, CallID: c.ID, Detail: detail + "\n\nA hook asks you to approve this: " + why, Rewritten: inputWordsOf(hc.From)}
	ok, err := s.out.approve(ctx, a, b.approvalTimeout)
	reason := "a hook asked: " + why
	if err != nil {
		ok, reason = false, "a hook asked for your approval and none came ("+err.Error()+")"
	}
	if !r.Approved(ctx, fsm.ApprovalDecided{Turn: turn, CallID: c.ID, Approved: ok, Why: reason}) || !ok {
		hc.Done = true
		return hc
	}
	hc.Asked = true
	return hc
}

// inputWordsOf is inputWords of a possibly empty input.
func inputWordsOf(input string) string {
	if input == "" {
		return ""
	}
	return inputWords(input)
}

// PostToolUse runs the PostToolUse hooks of call c, which produced
// out; their reports are stepped just before the call's ToolCompleted.
func (r callRun) PostToolUse(ctx context.Context, c fsm.ToolCall, out toolcall.Outcome) []fsm.HookReport {
	s := r.s
	fh := s.hooks.hooksFor(agenthooks.PostToolUse)
	if fh == nil {
		return nil
	}
	in := agenthooks.Input{Tool: c.Name, ToolInput: json.RawMessage(c.Arguments), ToolUseID: c.ID, ToolOutput: out.Result, ToolFailed: out.IsError}
	return s.hooks.run(ctx, fh, agenthooks.PostToolUse, c.Name, in)
}

// acceptedCall is a reviewed edit's call as the user accepted it: the
// call itself when accepted whole, else an input that makes exactly the
// change applied (edit_file: the file's text before and after;
// write_file: the text written), so that a PostToolUse hook never reads
// a change that was not made.
func acceptedCall(c fsm.ToolCall, e *tools.Edit, whole bool) fsm.ToolCall {
	if whole {
		return c
	}
	var args map[string]any
	if json.Unmarshal([]byte(c.Arguments), &args) != nil || args == nil {
		args = map[string]any{}
	}
	switch c.Name {
	case "edit_file":
		args["old_string"], args["new_string"] = e.OldText, e.NewText
		delete(args, "replace_all")
	case "write_file":
		args["content"] = e.NewText
	default:
		return c
	}
	data, _ := json.Marshal(args)
	c.Arguments = string(data)
	return c
}

func cmpOr(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// hookNote is a hook report as the front ends show it.
func hookNote(a fsm.DisplayHook) *HookNote {
	r := a.Report
	return &HookNote{Event: a.Event, CallID: a.CallID, Hook: r.Hook, Decision: r.Decision, Reason: r.Reason, Context: r.Context,
		Message: r.Message, Problem: r.Problem, Held: r.Held, StopTurn: r.StopTurn, StopReason: r.StopReason, Input: r.Input}
}

// HookNote is what one hook said, for NoteHook.
type HookNote struct {
	Event  string `json:"event"`
	CallID string `json:"callId,omitempty"`
	// Hook names it: file:line, event, command.
	Hook     string `json:"hook"`
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Context  string `json:"context,omitempty"`
	Message  string `json:"message,omitempty"`
	// Problem: it ran and failed (timed out, crashed, invalid output);
	// Held: it was not run, and why.
	Problem    string `json:"problem,omitempty"`
	Held       string `json:"held,omitempty"`
	StopTurn   bool   `json:"stopTurn,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	// Input is the call's input as the hook rewrote it (PreToolUse).
	Input string `json:"input,omitempty"`
}

// shown reports whether a report is shown: a hook that asked to be quiet
// (suppressOutput) is shown only when it decided, rewrote, ended the
// turn, failed or was held back.
func shown(r fsm.HookReport) bool {
	return !r.Quiet || r.Decision != "" || r.Input != "" || r.StopTurn || r.Problem != "" || r.Held != ""
}

// Line is the note in one line of words, for front ends that show text.
func (h *HookNote) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "hook %s: %s", h.Hook, h.outcome())
	if h.Input != "" && h.Held == "" && h.Problem == "" && h.Decision != "deny" {
		fmt.Fprintf(&b, "; rewrote the input: %s", firstLineOf(inputWords(h.Input)))
	}
	if h.Context != "" && h.Held == "" && h.Problem == "" {
		b.WriteString(" (added context)")
	}
	if h.StopTurn {
		fmt.Fprintf(&b, "; ends the turn: %s", h.StopReason)
	}
	if h.Message != "" && h.Problem == "" {
		fmt.Fprintf(&b, " — %s", firstLineOf(h.Message))
	}
	return b.String()
}

// outcome says in words what came of the hook: held back, failed, its
// decision, or ran.
func (h *HookNote) outcome() string {
	switch {
	case h.Held != "":
		return "not run (" + h.Held + ")"
	case h.Problem != "" && h.Message != "":
		return "failed (" + h.Problem + "): " + firstLineOf(h.Message)
	case h.Problem != "":
		return "failed (" + h.Problem + ")"
	case h.Decision != "" && h.Reason != "":
		return h.Decision + ": " + firstLineOf(h.Reason)
	case h.Decision != "":
		return h.Decision
	}
	return "ran"
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// inputWords is a tool input for people: a command as it is, anything
// else as its JSON.
func inputWords(input string) string {
	var args struct {
		Command string `json:"command"`
	}
	if json.Unmarshal([]byte(input), &args) == nil && args.Command != "" {
		return args.Command
	}
	return input
}

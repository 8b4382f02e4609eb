package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/jsonrpc/headless"
	"github.com/loom-lsp/loom-lsp/secret"
	"github.com/loom-lsp/loom-lsp/workspace"
	"github.com/loom-lsp/loom-lsp/workspace/gitworktree"
)

const execUsage = `Usage: loom-lsp exec [flags] PROMPT
       echo PROMPT | loom-lsp exec [flags] -

Runs one agent turn in the current directory's workspace, with the same
tools, git auto-commit and journal as the editor daemon, and exits. Flags
may come before or after PROMPT; after "--" everything is the prompt.

Shell commands: exec cannot ask for approval, so under the default policy
(tools.bash = "ask") the agent's commands are refused. Pass
--approve bash=allow to let it run them (or --approve bash=deny to tell it
not to try).

Examples:
  loom-lsp exec "add a --verbose flag to main.go"
  loom-lsp exec --output jsonl --approve bash=allow "run the tests and fix what fails"
  loom-lsp exec --base-url http://localhost:11434/v1 --model qwen2.5-coder "explain main.go"
  loom-lsp exec --script testdata/session.toml "hi"      # a scripted model, offline

Output: --output text prints the assistant's messages on stdout, each on
lines of its own (tool calls, commits and errors go to stderr; on a
terminal, stderr also says what the turn is waiting for and shows the
model's thinking, dimmed); --output jsonl
prints one JSON event per line on stdout (see README.md, "exec JSONL
events"). Logs (--debug) go to stderr.

Exit codes: 0 done; 1 the turn failed; 2 bad usage; 3 configuration error or
no model configured; 4 the model failed; 130 interrupted (SIGINT/SIGTERM,
or the reader of stdout went away).

Flags:
`

// proposeComment is what the model reads of a change under --edits
// propose.
const proposeComment = "dry run (exec --edits propose): your change was recorded as a proposed patch and not written; do not retry it, go on with the rest of the task or finish"

// execFlags are the flags of `loom-lsp exec`.
type execFlags struct {
	output, model, baseURL, configFile, approve, script string
	edits, restore                                      string
	// mode is --mode (agent, plan or ask; "" keeps the conversation's),
	// plan is --plan (what to do with a proposed plan: stop or accept).
	mode, plan string
	// elicit is --elicit: decline or defaults (headless.Elicit*).
	elicit string
	// images are the --image files, in order.
	images                                imagesFlag
	maxIterations                         int
	rewind                                uint64
	fresh, verbose, debug, noDeltas, list bool
	// resume is --resume: "" when absent, resumeLatest without an id.
	resume resumeFlag
	// conversation is --conversation ID.
	conversation string
	// worktree is --worktree, worktreeMerge --worktree-merge (apply or
	// keep).
	worktree      bool
	worktreeMerge string
}

// resumeLatest is --resume with no id: the folder's most recent
// conversation.
const resumeLatest = "latest"

// resumeFlag is --resume, alone (the most recent conversation) or
// --resume=ID.
type resumeFlag string

func (r *resumeFlag) String() string { return string(*r) }

func (r *resumeFlag) Set(v string) error {
	if v == "true" || v == "" {
		v = resumeLatest
	}
	if v == "false" {
		v = ""
	}
	*r = resumeFlag(v)
	return nil
}

func (r *resumeFlag) IsBoolFlag() bool { return true }

func (f *execFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.output, "output", "text", "output format: text or jsonl")
	fs.StringVar(&f.model, "model", "", "model name (overrides [model] name)")
	fs.StringVar(&f.baseURL, "base-url", "", "OpenAI-compatible API root (overrides [model] base_url)")
	fs.StringVar(&f.configFile, "config", "", "config file to use instead of ~/.config/loom/loom.toml")
	fs.StringVar(&f.approve, "approve", "", "bash=allow or bash=deny (default: the config's tools.bash; \"ask\" cannot ask here, so bash is refused)")
	fs.IntVar(&f.maxIterations, "max-iterations", 0, "max model requests in the turn (overrides agent.max_iterations)")
	fs.Var(&f.resume, "resume", "continue the workspace's most recent conversation, or, with --resume ID (or --resume=ID), that one")
	fs.StringVar(&f.conversation, "conversation", "", "continue the conversation ID (see --list)")
	fs.BoolVar(&f.list, "list", false, "list the workspace's conversations (a table, or JSONL with --output jsonl) and exit")
	fs.BoolVar(&f.fresh, "new", false, "start a new conversation (the default)")
	fs.StringVar(&f.script, "script", "", "use the scripted model in this TOML file (offline; see llm/testdata/README.md)")
	fs.BoolVar(&f.verbose, "verbose", false, "text output: show each command's output under its line, and the model's thinking (shown on a terminal anyway)")
	fs.BoolVar(&f.debug, "debug", false, "log debug details to stderr")
	fs.BoolVar(&f.noDeltas, "no-deltas", false, "jsonl output: leave out message_delta events (message_completed has each whole message)")
	fs.StringVar(&f.edits, "edits", "", "auto (apply edits, the default) or propose (a dry run: write nothing, print each change as a unified diff / proposed_change event)")
	fs.Uint64Var(&f.rewind, "rewind", 0, "rewind the workspace's conversation to before turn N first (see --restore); the PROMPT is then optional")
	fs.StringVar(&f.restore, "restore", "both", "with --rewind: files, conversation or both")
	fs.Var(&f.images, "image", "attach a picture (PNG, JPEG, GIF or WebP, at most 5 MB) to the prompt; repeatable; the model must take pictures (model.images)")
	fs.StringVar(&f.mode, "mode", "", "the conversation's mode: agent (edit and run), plan (read-only: investigate and propose a plan) or ask (read-only: answer); default: the conversation's (agent for a new one)")
	fs.StringVar(&f.elicit, "elicit", "decline", "how to answer an MCP server's question (elicitation), since exec cannot ask: decline, or defaults (accept a form with its defaults when every required field has one; a URL is declined)")
	fs.BoolVar(&f.worktree, "worktree", false, "run the conversation in a git worktree of its own under loom's state directory (the only tree its commands may write), then merge its changes three-way into your current tree (see --worktree-merge; docs/worktrees.md)")
	fs.StringVar(&f.worktreeMerge, "worktree-merge", worktreeMergeApply, "with --worktree, what to do with its changes at the end: apply (merge them three-way into your tree, keeping your own edits; overlapping hunks are left out, named, and the worktree kept) or keep (report them, and keep the worktree for 'loom-lsp worktrees merge')")
	fs.StringVar(&f.plan, "plan", "stop", "what to do with a plan the model proposes in plan mode: stop (print it; the turn ends, resume with your feedback or --mode agent) or accept (switch to agent mode and carry it out)")
}

// overrides turns the flags into a configuration layer, the last and
// strongest one.
func (f *execFlags) overrides() (config.Override, error) {
	model, agent, tools := map[string]any{}, map[string]any{}, map[string]any{}
	if f.model != "" {
		model["name"] = f.model
	}
	if f.baseURL != "" {
		model["base_url"] = f.baseURL
	}
	if f.script != "" {
		abs, err := filepath.Abs(f.script)
		if err != nil {
			return config.Override{}, err
		}
		model["provider"], model["script"] = config.ProviderScript, abs
	}
	if f.maxIterations != 0 {
		if f.maxIterations < 1 {
			return config.Override{}, fmt.Errorf("--max-iterations must be at least 1")
		}
		agent["max_iterations"] = f.maxIterations
	}
	if f.approve != "" {
		tool, policy, ok := strings.Cut(f.approve, "=")
		if !ok || tool != "bash" || (policy != "allow" && policy != "deny") {
			return config.Override{}, fmt.Errorf("--approve takes bash=allow or bash=deny, not %q", f.approve)
		}
		tools["bash"] = policy
	}
	switch f.edits {
	case "", "auto":
	case "propose":
		tools["edits"] = "review" // proposals are answered by exec itself
	case "review":
		return config.Override{}, fmt.Errorf("--edits review needs someone to review each change, and exec has no one to ask; use --edits propose for a dry run")
	default:
		return config.Override{}, fmt.Errorf("--edits is auto or propose, not %q", f.edits)
	}
	layer := map[string]any{}
	for name, m := range map[string]map[string]any{"model": model, "agent": agent, "tools": tools} {
		if len(m) > 0 {
			layer[name] = m
		}
	}
	b, err := json.Marshal(layer)
	return config.Override{Name: "command-line flags", JSON: b}, err
}

func init() {
	commands["exec"] = subcommand{summary: "run one agent turn headless, for scripts and CI", run: func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		return interruptible(func(ctx context.Context) int { return runExec(ctx, args, stdin, stdout, stderr) })
	}}
}

// runExec implements `loom-lsp exec`; cancelling ctx interrupts it:
// the flags are read and checked, the prompt and pictures read, the
// configuration and the model checked, then the one turn runs.
func runExec(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	keepExecSmall()
	c := newCommandLine("exec", execUsage)
	var f execFlags
	f.register(c.fs)
	// In JSONL mode a failure before the turn is also one error event.
	jsonl := flagValue(args, "output") == string(headless.JSONL)
	usageErr := func(err error) int {
		if jsonl {
			stdout.Write(headless.ErrorEvent("usage", err.Error()))
		}
		return c.usageError(stderr, "%v", err)
	}
	rest, code, done := c.parse(args, stdout, stderr)
	if done {
		if code == exitUsage && jsonl {
			stdout.Write(headless.ErrorEvent("usage", "bad flags; run 'loom-lsp exec --help'"))
		}
		return code
	}
	rest, err := f.pickConversation(rest)
	if err != nil {
		return usageErr(err)
	}
	if f.list {
		return listConversations(stdout, stderr, f.output == string(headless.JSONL))
	}
	if rest, err = f.check(rest); err != nil {
		return usageErr(err)
	}
	prompt, images, err := f.input(rest[0], stdin)
	if err != nil {
		return usageErr(err)
	}
	layer, err := f.overrides()
	if err != nil {
		return usageErr(err)
	}
	configErr := func(err error) int {
		fmt.Fprintf(stderr, "loom-lsp exec: %v\n", err)
		if jsonl {
			stdout.Write(headless.ErrorEvent("config", err.Error()))
		}
		return exitConfig
	}
	folder, err := os.Getwd()
	if err != nil {
		return configErr(err)
	}
	load := func(folder string, overrides []config.Override) (config.Config, error) {
		cfg, _, err := config.Load(config.LoadOptions{Folder: folder, ExplicitFile: f.configFile,
			Overrides: append(append([]config.Override(nil), overrides...), layer)})
		return cfg, err
	}
	// Check the configuration and the model before starting anything, to
	// fail fast with a precise message.
	cfg, err := load(folder, nil)
	if err == nil {
		_, err = workspace.NewProvider(cfg, secret.Getenv)
	}
	if err != nil {
		return configErr(err)
	}
	// Orphan worktrees (a killed loom's) are cleaned or named first; then
	// --worktree moves the conversation into a worktree of its own.
	report := worktreeReport{stdout: stdout, stderr: stderr, jsonl: jsonl}
	worktrees, err := worktreeManager(cfg.Worktrees.MaxSizeMB)
	if err == nil {
		recoverWorktrees(ctx, worktrees, report)
	}
	var wt *gitworktree.Worktree
	var readOnly []string
	if f.worktree {
		if err == nil {
			wt, err = startWorktree(ctx, worktrees, folder, report)
		}
		if err != nil {
			return configErr(fmt.Errorf("--worktree: %w", err))
		}
		// The user's tree stays read-only to the worktree's commands,
		// also where it lies inside a writable temp directory.
		readOnly = []string{folder}
		folder = wt.Dir
	}
	// Everything the user should read is notified (and shown once); the
	// log is for --debug.
	logger := slog.New(slog.DiscardHandler)
	if f.debug {
		logger = slog.New(slog.NewTextHandler(secret.Default.Writer(stderr), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	var host *workspace.Host
	editor := headless.New(f.editorOptions(ctx, stdout, stderr, func() (*workspace.Conversation, error) { return host.Conversation(folder) }))
	host = workspace.NewHost(workspace.HostOptions{
		Editor:          editor,
		Config:          load,
		Logger:          logger,
		NewConversation: f.resume == "" && f.conversation == "" && f.rewind == 0,
		DiscardHeld:     true,
		ReadOnlyTrees:   readOnly,
		TrustHow:        func() string { return execTrustHow },
	})
	exitCode := headlessTurn{host: host, editor: editor, stdout: stdout, folder: folder, prompt: prompt, stderr: stderr, jsonl: jsonl,
		rewind: f.rewind, restore: fsm.Restore(f.restore), conversation: f.conversation, mode: fsm.Mode(f.mode), images: images}.run(ctx)
	if wt != nil {
		exitCode = finishWorktree(ctx, worktrees, wt, f.worktreeMerge, exitCode, report)
	}
	return exitCode
}

// pickConversation reads --resume ID PROMPT (an id the flag package left
// among the arguments) and makes --resume ID name the conversation, as
// --conversation does; rest is what is left of the arguments.
func (f *execFlags) pickConversation(rest []string) ([]string, error) {
	if f.resume == resumeLatest && len(rest) == 2 && strings.HasPrefix(rest[0], "loom-") {
		f.resume, rest = resumeFlag(rest[0]), rest[1:] // --resume ID PROMPT
	}
	if f.resume != "" && f.resume != resumeLatest {
		if f.conversation != "" && f.conversation != string(f.resume) {
			return nil, fmt.Errorf("--resume %s and --conversation %s name two conversations", f.resume, f.conversation)
		}
		f.conversation = string(f.resume)
	}
	return rest, nil
}

// check refuses flags that name nothing or contradict each other, and
// wants one PROMPT argument (optional with --rewind), which rest then is.
func (f *execFlags) check(rest []string) ([]string, error) {
	if f.rewind > 0 && len(rest) == 0 {
		rest = []string{""}
	}
	if err := f.checkWorktree(); err != nil {
		return nil, err
	}
	switch {
	case f.restore != string(fsm.RestoreFiles) && f.restore != string(fsm.RestoreConversation) && f.restore != string(fsm.RestoreBoth):
		return nil, fmt.Errorf("--restore is files, conversation or both, not %q", f.restore)
	case f.rewind > 0 && f.fresh:
		return nil, fmt.Errorf("--rewind works on the workspace's conversation: it excludes --new")
	case len(rest) != 1:
		return nil, fmt.Errorf("want exactly one PROMPT argument, got %d (%q): quote the prompt, or pass - to read it from stdin", len(rest), rest)
	case (f.resume != "" || f.conversation != "") && f.fresh:
		return nil, fmt.Errorf("--resume and --new exclude each other")
	case f.output != string(headless.Text) && f.output != string(headless.JSONL):
		return nil, fmt.Errorf("--output is text or jsonl, not %q", f.output)
	case f.mode != "" && !fsm.Mode(f.mode).Valid():
		return nil, fmt.Errorf("--mode is agent, plan or ask, not %q", f.mode)
	case f.plan != "stop" && f.plan != "accept":
		return nil, fmt.Errorf("--plan is stop or accept, not %q", f.plan)
	case f.elicit != headless.ElicitDecline && f.elicit != headless.ElicitDefaults:
		return nil, fmt.Errorf("--elicit is decline or defaults, not %q", f.elicit)
	}
	return rest, nil
}

// checkWorktree refuses --worktree-merge values exec cannot honour and
// --worktree with flags that continue a conversation.
func (f *execFlags) checkWorktree() error {
	switch {
	case f.worktreeMerge == "ask":
		return fmt.Errorf("--worktree-merge ask needs someone to review the changes, and exec has no one to ask; use keep (report them and keep the worktree for 'loom-lsp worktrees merge') or apply")
	case f.worktreeMerge != worktreeMergeApply && f.worktreeMerge != worktreeMergeKeep:
		return fmt.Errorf("--worktree-merge is apply or keep, not %q", f.worktreeMerge)
	case f.worktree && (f.resume != "" || f.conversation != "" || f.rewind > 0):
		return fmt.Errorf("--worktree starts a new conversation in a new worktree: it excludes --resume, --conversation and --rewind")
	}
	return nil
}

// input reads the turn's prompt (arg, or stdin for "-"; empty only with
// --rewind) and the --image pictures.
func (f *execFlags) input(arg string, stdin io.Reader) (string, []workspace.ImageInput, error) {
	var images []workspace.ImageInput
	for _, path := range f.images {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", nil, fmt.Errorf("--image: %v", err)
		}
		images = append(images, workspace.ImageInput{Name: path, Data: b})
	}
	prompt := arg
	if prompt == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return "", nil, fmt.Errorf("reading the prompt from stdin: %v", err)
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" && f.rewind == 0 {
		return "", nil, fmt.Errorf("the prompt is empty")
	}
	return prompt, images, nil
}

// editorOptions is how the turn is shown (--output, --verbose,
// --no-deltas, a terminal's colours and progress) and what answers for
// the user: a proposed plan (--plan) and, in a dry run, each proposed
// change. conversation finds the turn's conversation.
func (f *execFlags) editorOptions(ctx context.Context, stdout, stderr io.Writer, conversation func() (*workspace.Conversation, error)) headless.Options {
	format := headless.Format(f.output)
	terminal := isTerminal(stderr)
	opts := headless.Options{
		Format: format, Out: stdout, Log: stderr, NoDeltas: f.noDeltas,
		Color: colorAllowed(stderr), Progress: format == headless.Text && terminal,
		ShowOutput: f.verbose, ShowReasoning: f.verbose || (format == headless.Text && terminal),
		Elicit: f.elicit,
	}
	// A plan proposed for approval: accepted (--plan accept), or the turn
	// ends with it printed (a rejection without a comment: the user's
	// next prompt says what to change).
	opts.OnPlan = func(string) {
		if s, err := conversation(); err == nil {
			s.Controls().DecidePlan(ctx, workspace.PlanDecision{Accept: f.plan == "accept"})
		}
	}
	if f.edits == "propose" {
		// A dry run: each proposal is shown, then rejected so that
		// nothing is written, with a word for the model.
		opts.OnProposal = func(p workspace.ProposalNote) {
			if s, err := conversation(); err == nil {
				s.Review().Decide(ctx, p.ID, nil, []string{workspace.AllHunks}, proposeComment)
			}
		}
	}
	return opts
}

// listConversations prints the conversations of the working directory's
// folder, most recent first: a table, or one JSON object a line.
func listConversations(stdout, stderr io.Writer, jsonl bool) int {
	folder, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp exec: %v\n", err)
		return exitConfig
	}
	host := workspace.NewHost(workspace.HostOptions{Editor: headless.New(headless.Options{Out: io.Discard, Log: stderr})})
	defer host.Close()
	all, err := host.Conversations(folder)
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp exec: %v\n", err)
		return exitConfig
	}
	if jsonl {
		for _, c := range all {
			b, _ := json.Marshal(map[string]any{"id": c.ID, "title": c.Title, "updated": c.Updated.UTC().Format(time.RFC3339),
				"turns": c.Turns, "usage": c.Usage, "open_elsewhere": c.Elsewhere})
			stdout.Write(append(b, '\n'))
		}
		return exitOK
	}
	if len(all) == 0 {
		fmt.Fprintln(stderr, "no conversation in "+folder)
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tTURNS\tTITLE")
	for _, c := range all {
		title := c.Title
		if title == "" {
			title = "(no prompt yet)"
		}
		if c.Elsewhere {
			title += "  [open in another loom process]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", c.ID, c.Updated.Local().Format("2006-01-02 15:04"), c.Turns, title)
	}
	tw.Flush()
	return exitOK
}

// imagesFlag is --image, repeatable.
type imagesFlag []string

func (i *imagesFlag) String() string { return strings.Join(*i, ",") }

func (i *imagesFlag) Set(v string) error {
	*i = append(*i, v)
	return nil
}

// execMemoryTarget is the heap exec asks Go's collector to stay under
// (a soft limit: the collector works harder near it, nothing fails past
// it), so that a turn's peak memory stays well inside exec's 100 MB
// budget (TestMemoryEndlessStream) also when a long answer streams in
// faster than the default pacing collects. GOMEMLIMIT, when set, wins.
const execMemoryTarget = 48 << 20

func keepExecSmall() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(execMemoryTarget)
	}
}

package workspace

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/agenthooks"
)

// convHooks runs the agent hooks (agenthooks.go: the folder's set, loaded
// with its configuration) for one conversation: the hooks of a prompt,
// of the machine's Stop, and those that only observe (PreCompact,
// Notification); the tool call's PreToolUse and PostToolUse run through
// the same run (callRun's ports). It knows the conversation only by its
// id and transcript, and reaches it only by posting events and starting
// workers.
type convHooks struct {
	// folder is the folder's hooks (nil: none defined); dir the folder;
	// heldHow says how to let a held hook run.
	folder  *atomic.Pointer[folderHooks]
	dir     string
	heldHow func(why string) string
	// id and transcript are the conversation's id and journal path, for
	// the hooks' input.
	id, transcript func() string
	// goWorker runs f on a worker of the conversation; post and postLive
	// step an event on its goroutine (postLive: unless the turn of ctx
	// is gone); done is closed when it stopped.
	goWorker func(f func())
	post     func(ev fsm.Event)
	postLive func(ctx context.Context, ev fsm.Event)
	done     <-chan struct{}
}

// hooksFor returns the folder's hooks when some are defined for ev, nil
// otherwise (the free path).
func (h *convHooks) hooksFor(ev agenthooks.Event) *folderHooks {
	fh := h.folder.Load()
	if fh == nil || !fh.set.Has(ev) {
		return nil
	}
	return fh
}

// runHooks runs the hooks of ev that select name, in parallel as Claude
// Code does, and returns their reports in definition order. A hook held
// back is reported once (per hook and reason), then skipped silently.
func (h *convHooks) run(ctx context.Context, fh *folderHooks, ev agenthooks.Event, name string, in agenthooks.Input) []fsm.HookReport {
	in.Event, in.Cwd, in.Now = ev, h.dir, time.Now()
	in.SessionID = h.id()
	in.TranscriptPath = h.transcript()
	hooks := fh.set.For(ev, name)
	reports := make([]fsm.HookReport, len(hooks))
	keep := make([]bool, len(hooks))
	var wg sync.WaitGroup
	for i, hk := range hooks {
		if ok, why := fh.admit(hk); !ok {
			if _, told := fh.told.LoadOrStore(hk.Name()+"\x00"+why, true); !told {
				reports[i], keep[i] = fsm.HookReport{Hook: hk.Name(), Held: why + h.heldHow(why)}, true
			}
			continue
		}
		keep[i] = true
		run := func() {
			res := fh.runnerFor(hk).Run(ctx, hk, in)
			reports[i] = fsm.HookReport{
				Hook: hk.Name(), Decision: string(res.Decision), Reason: res.Reason, Context: res.Context,
				Message: res.Message, Problem: res.Problem, StopTurn: res.StopTurn, StopReason: res.StopReason,
				Input: string(res.Input), Quiet: res.Quiet,
			}
		}
		if len(hooks) == 1 {
			run()
			break
		}
		wg.Add(1)
		go func() { defer wg.Done(); run() }()
	}
	wg.Wait()
	out := reports[:0]
	for i, r := range reports {
		if keep[i] {
			out = append(out, r)
		}
	}
	return out
}

// promptHooks runs, before a prompt is stepped, the SessionStart hooks
// (first prompt of the conversation) and the UserPromptSubmit hooks, on
// the asking goroutine. It returns the events to step before the
// prompt, and sets the prompt's HookContext and Refused.
func (h *convHooks) prompt(ctx context.Context, in *fsm.UserInput, source string) []fsm.HooksDecided {
	var evs []fsm.HooksDecided
	var contexts, refused []string
	collect := func(name string, reports []fsm.HookReport) {
		if len(reports) == 0 {
			return
		}
		evs = append(evs, fsm.HooksDecided{Event: name, Hooks: reports})
		for _, r := range reports {
			if r.Held != "" || r.Problem != "" {
				continue
			}
			if r.Context != "" {
				contexts = append(contexts, r.Context)
			}
			if r.Decision == string(agenthooks.Block) || r.StopTurn {
				refused = append(refused, cmpOr(r.Reason, r.StopReason, "("+r.Hook+")"))
			}
		}
	}
	if fh := h.hooksFor(agenthooks.SessionStart); fh != nil && source != "" {
		collect(fsm.HookSessionStart, h.run(ctx, fh, agenthooks.SessionStart, source, agenthooks.Input{Source: source}))
	}
	if fh := h.hooksFor(agenthooks.UserPromptSubmit); fh != nil {
		collect(fsm.HookUserPromptSubmit, h.run(ctx, fh, agenthooks.UserPromptSubmit, "", agenthooks.Input{Prompt: in.Text}))
	}
	in.HookContext = strings.Join(contexts, "\n")
	in.Refused = strings.Join(refused, "; ")
	return evs
}

// stop runs the Stop hooks the machine asked for, on a worker of the
// turn whose context is ctx, and steps what they said.
func (h *convHooks) stop(ctx context.Context, a fsm.RunStopHooks) {
	fh := h.folder.Load()
	h.goWorker(func() {
		var reports []fsm.HookReport
		if fh != nil {
			reports = h.run(ctx, fh, agenthooks.Stop, "", agenthooks.Input{StopHookActive: a.Active, LastMessage: a.LastMessage})
		}
		h.postLive(ctx, fsm.HooksDecided{Turn: a.Turn, Event: fsm.HookStop, Hooks: reports})
	})
}

// sideHooks runs the hooks of an event that only observes (PreCompact,
// Notification) on a worker; what they said is stepped when they end.
func (h *convHooks) side(ev agenthooks.Event, name string, turn uint64, in agenthooks.Input) {
	fh := h.hooksFor(ev)
	if fh == nil {
		return
	}
	h.goWorker(func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-h.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		if reports := h.run(ctx, fh, ev, name, in); len(reports) > 0 {
			h.post(fsm.HooksDecided{Turn: turn, Event: string(ev), Hooks: reports})
		}
	})
}

// notifyHooks fires the Notification hooks: loom waits for the user.
func (h *convHooks) notify(turn uint64, what string) {
	if h.folder.Load() == nil {
		return
	}
	h.side(agenthooks.Notification, "permission_prompt", turn, agenthooks.Input{Message: "loom needs your permission to " + what})
}

// sessionStart is what a conversation's next prompt tells its
// SessionStart hooks; the owner goroutine owns it.
type sessionStart struct {
	// after is the source after a reset ("clear"), "" otherwise.
	after string
	// done is set once the SessionStart hooks fired (with the
	// conversation's first prompt).
	done bool
}

// source is the source of the SessionStart hooks the next prompt fires,
// msgs being the conversation: "startup", "resume" (a conversation
// restored with its messages), "clear" (after a reset); "" once they
// fired.
func (st sessionStart) source(msgs []fsm.Message) string {
	switch {
	case st.done:
		return ""
	case st.after != "":
		return st.after
	case hasExchange(msgs):
		return "resume"
	}
	return "startup"
}

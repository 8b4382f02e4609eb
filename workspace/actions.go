package workspace

import (
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/workspace/agenthooks"
)

// perform carries out one action of the machine. It never blocks: I/O
// runs on worker goroutines, which report back through the inbox. An
// action that only shows something is its notification (displayNote).
func (s *Conversation) perform(a fsm.Action) {
	if s.performPlan(a) {
		return
	}
	if n, ok := displayNote(a); ok {
		s.out.notify(n)
		return
	}
	if reviewAction(s.review, a) {
		return
	}
	switch a := a.(type) {
	case fsm.SendLlmRequest:
		s.sendRequest(a)
	case fsm.RunStopHooks:
		s.hooks.stop(s.turn.context(), a)
	case fsm.ExecuteTools:
		ctx, batch := s.turn.context(), s.newBatch(a)
		watching := s.folder.watchReady
		s.loop.goWorker(func() {
			// The tools run once the folder's watcher watches, so that a
			// file they read and someone changes afterwards is always
			// seen changed (stale, and said), never lost in the
			// watcher's start (TestNoticesReachTheirSessionOnly).
			if watching != nil {
				select {
				case <-watching:
				case <-ctx.Done():
				}
			}
			batch.Run(ctx)
		})
	case fsm.RunPostToolsHook:
		ctx := s.turn.context()
		job := s.git.takeBatch(s.turnPrompt, s.cfg)
		job.Turn, job.Sandbox = a.Turn, s.env.Sandbox
		s.loop.goWorker(func() { s.runHook(ctx, a, job) })
	case fsm.DisplayToolCall:
		s.out.notify(Notification{Kind: NoteTool, Turn: a.Turn, Tool: s.cards.card(a, s.m)})
		if a.Status != fsm.ToolPending && a.Status != fsm.ToolStreaming {
			s.children.progress("running", a.Name+" "+string(a.Status))
		}
	case fsm.ScheduleRetry:
		req, ctx := a.Request, s.turn.context()
		s.turn.retryAfter(a.Delay, func() { s.loop.postEventLive(ctx, fsm.RetryTimeoutFired{Request: req}) })
		s.out.notify(Notification{Kind: NoteRetry, Turn: a.Turn, Delay: a.Delay,
			Text: a.Reason, ErrorKind: a.Kind})
	case fsm.CancelInFlight:
		s.turn.stop()
		s.review.Drop()
	case fsm.StartChild:
		s.children.start(a)
	case fsm.StopChild:
		s.children.stop(a)
	case fsm.WaitForInput:
		s.turn.stop()
		s.review.Drop()
		s.git.turnEnded()
		s.cards.clear()
		_, total := s.m.Usage()
		s.out.notify(Notification{Kind: NoteTurnEnded, Turn: a.Turn, Outcome: a.Outcome, Usage: a.Usage, TotalUsage: &total})
		s.children.turnEnded(a, s.m)
	case fsm.Compacted:
		if s.m.State().Kind == fsm.WaitingForUserInput {
			s.turn.stop() // an on-demand compaction is over
		}
		s.out.notify(Notification{Kind: NoteCompacted, Turn: a.Turn, Text: a.Summary,
			Compaction: &CompactionNote{Dropped: a.Dropped, Tokens: a.Tokens}})
	case fsm.ConversationReset:
		s.session = sessionStart{after: "clear"}
		s.changes.TurnStarted()
		s.turn.stop()
		s.restartJournal()
	case fsm.Shutdown:
		s.turn.stop()
		s.stopping = true
	case fsm.ModelSelected:
		s.out.notify(Notification{Kind: NoteInfo, Turn: s.m.State().Turn, Text: "This conversation now uses the model " + modelName(s.m, s.cfg) + "."})
	case fsm.EffortSelected:
		s.out.notify(Notification{Kind: NoteInfo, Turn: s.m.State().Turn, Text: effortWords(a.Effort, s.cfg.Model.ReasoningEffort)})
	}
}

// sendRequest streams the model's response on a worker goroutine; the
// first request of a turn starts it (its prompt, its batch of edits),
// a compaction's runs the PreCompact hooks.
func (s *Conversation) sendRequest(a fsm.SendLlmRequest) {
	if a.Turn != s.startedTurn && !a.Compaction {
		s.startedTurn = a.Turn
		s.turnPrompt = a.Messages[len(a.Messages)-1].Content
		s.git.newBatch()
		s.changes.TurnStarted()
		s.turnTimes[a.Turn] = time.Now()
		s.out.notify(Notification{Kind: NoteTurnStarted, Turn: a.Turn, Text: a.Messages[len(a.Messages)-1].Content})
	}
	if a.Compaction {
		s.hooks.side(agenthooks.PreCompact, "auto", a.Turn, agenthooks.Input{Source: "auto"})
	}
	ctx := s.turn.context()
	provider, schemas := s.provider, s.schemas
	if provider == nil {
		msg := "no model is configured"
		if s.modelErr != nil {
			msg = s.modelErr.Error()
		}
		s.loop.goWorker(func() {
			s.loop.postEvent(fsm.LlmError{Request: a.Request, Kind: fsm.ErrorOther, Message: msg})
		})
		return
	}
	if a.Compaction {
		schemas = nil // a summary, not tool calls
	}
	req := llm.Request{ID: a.Request, Messages: a.Messages, TurnStart: a.TurnStart, Tools: schemas, Model: a.Model, ReasoningEffort: a.Effort, CacheKey: s.ID(),
		Images: s.folder.host.readImage}
	prober, askRunning := provider.(llm.RunningWindowProber)
	askRunning = askRunning && s.runningWindow.Tokens == 0
	completed := false
	emit := func(ev fsm.Event) {
		if _, ok := ev.(fsm.LlmCompleted); ok {
			completed = true
			if askRunning {
				// The response loaded the model: the window the server
				// runs it with is known now, and is published before
				// the completion is stepped, so that the request that
				// follows (and loom.status) budgets with it.
				s.folder.window.learnRunningNow(ctx, prober)
			}
		}
		s.loop.postEventLive(ctx, ev)
	}
	s.loop.goWorker(func() {
		provider.Stream(ctx, req, emit)
		if completed {
			s.folder.window.refresh()
		}
	})
}

// RetryWords says a scheduled retry in words: "retrying in 4s (rate
// limited)". Front ends show a NoteRetry with it, so the words are the
// same everywhere and said once.
func RetryWords(delay time.Duration, reason string) string {
	// The server's own "; retry in 2s" would say the delay twice.
	if i := strings.LastIndex(reason, "; retry in "); i >= 0 {
		reason = reason[:i]
	}
	if reason == "" {
		return "retrying in " + formatDelay(delay)
	}
	return "retrying in " + formatDelay(delay) + " (" + reason + ")"
}

func formatDelay(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/jsonrpc/headless"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// Exit codes of the headless subcommands (exec, demo).
const (
	exitOK          = 0
	exitFailed      = 1 // the turn failed for another reason (iteration limit, …)
	exitUsage       = 2 // bad flags or arguments
	exitConfig      = 3 // broken configuration, or no model configured
	exitModel       = 4 // the model failed (auth, bad request, retries exhausted, …)
	exitInterrupted = 130
)

// interruptible runs fn with a context that SIGINT or SIGTERM cancels. A
// closed stdout (SIGPIPE) must not kill the process before it has killed
// its tools: writes then fail instead, and the headless editor reports it.
func interruptible(fn func(ctx context.Context) int) int {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return fn(ctx)
}

// headlessTurn runs one user turn on folder through host and waits for it.
// Interrupting ctx cancels the turn (tools are killed) and gives
// exitInterrupted.
type headlessTurn struct {
	host   *workspace.Host
	editor *headless.Editor
	stdout io.Writer // watched for its reader going away
	folder string
	prompt string
	stderr io.Writer
	// jsonl makes failures before the turn also print an error event on
	// stdout.
	jsonl bool
	// rewind, when not 0, rewinds the conversation (restore: what) to
	// before that turn first; an empty prompt then runs no turn.
	rewind  uint64
	restore fsm.Restore
	// conversation, when set, is the conversation to continue.
	conversation string
	// mode, when set, switches the conversation's mode before the turn.
	mode fsm.Mode
	// images are pictures attached to the prompt.
	images []workspace.ImageInput
}

// fail reports a failure before the turn: on stderr, and as one JSON
// error event on stdout in JSONL mode. It returns code.
func (r headlessTurn) fail(code int, err error) int {
	fmt.Fprintf(r.stderr, "loom-lsp: %v\n", err)
	if r.jsonl {
		kind := "config"
		if code != exitConfig {
			kind = "other"
		}
		r.stdout.Write(headless.ErrorEvent(kind, err.Error()))
	}
	return code
}

// run opens the conversation, rewinds it first when asked, then runs
// the turn, watching the output for its reader going away, and gives
// the exit code the turn's end deserves.
func (r headlessTurn) run(ctx context.Context) int {
	defer r.editor.Close()
	defer r.host.Close()
	s, err := r.open()
	if err != nil {
		return r.fail(exitConfig, err)
	}
	if r.rewind > 0 {
		if err := r.rewindFirst(ctx, s); err != nil {
			return r.fail(exitFailed, err)
		}
		if strings.TrimSpace(r.prompt) == "" {
			return exitOK
		}
	}
	st, err := s.Status(ctx)
	if err != nil {
		return r.fail(exitFailed, err)
	}
	// Only the turn asked for now counts (a resumed conversation may have
	// just closed an interrupted one with the same number).
	r.editor.Begin(st, st.Turn > 0)
	// Nobody reads a closed stdout: stop the turn as if interrupted.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-r.editor.Broken():
			cancel()
		case <-ctx.Done():
		}
	}()
	go watchReaderGone(ctx, r.stdout, r.editor.OutputGone)
	// A one-shot run's first request must offer the MCP servers' tools:
	// wait for the servers still starting (mcp.startup_timeout).
	if _, err := s.WaitMCP(ctx); err != nil && ctx.Err() == nil {
		return r.fail(exitFailed, err)
	}
	if r.mode != "" {
		if err := s.Controls().SetMode(ctx, r.mode); err != nil {
			return r.fail(exitFailed, err)
		}
	}
	turn, err := s.AskWithImages(ctx, r.prompt, r.images)
	if err != nil {
		if errors.Is(err, config.ErrNoModel) || errors.Is(err, workspace.ErrConfig) || errors.Is(err, workspace.ErrImage) {
			return r.fail(exitConfig, err)
		}
		return r.fail(exitFailed, err)
	}
	ended, lastErr, err := r.editor.WaitTurn(ctx, turn)
	if err != nil {
		return r.interrupted(s, turn)
	}
	return turnExitCode(ended, lastErr)
}

// rewindFirst rewinds the conversation (--rewind, --restore) and says
// what it restored: an info event in JSONL mode, a line on stderr
// otherwise.
func (r headlessTurn) rewindFirst(ctx context.Context, s *workspace.Conversation) error {
	res, err := s.Changes().Rewind(ctx, r.rewind, r.restore)
	if err != nil {
		return err
	}
	what := map[fsm.Restore]string{fsm.RestoreFiles: "files", fsm.RestoreConversation: "conversation", fsm.RestoreBoth: "files and the conversation"}[r.restore]
	msg := fmt.Sprintf("rewound the %s to before turn %d", what, r.rewind)
	if len(res.Restored) > 0 {
		msg += fmt.Sprintf("; restored %s", strings.Join(res.Restored, ", "))
	}
	if left := res.LeftWords(); left != "" {
		msg += "; " + left
	}
	if res.Prompt != "" {
		msg += fmt.Sprintf("; that turn's prompt was: %s", res.Prompt)
	}
	if r.jsonl {
		b, _ := json.Marshal(headless.Event{Type: "info", Turn: r.rewind, Message: msg})
		r.stdout.Write(append(b, '\n'))
	} else {
		fmt.Fprintln(r.stderr, "loom-lsp: "+msg)
	}
	return nil
}

// interrupted cancels the turn, killing its tools, and waits for it to
// close so the conversation and journal stay valid; it says why.
func (r headlessTurn) interrupted(s *workspace.Conversation, turn uint64) int {
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Cancel(wait)
	r.editor.WaitTurn(wait, turn)
	select {
	case <-r.editor.Broken():
		fmt.Fprintln(r.stderr, "loom-lsp: the output was closed; the turn was cancelled")
	default:
		fmt.Fprintln(r.stderr, "loom-lsp: interrupted")
	}
	return exitInterrupted
}

// turnExitCode is the exit code of a turn that ended: done, cancelled,
// failed by the model (its error's kind), or failed otherwise.
func turnExitCode(ended, lastErr workspace.Notification) int {
	switch ended.Outcome {
	case fsm.TurnDone:
		return exitOK
	case fsm.TurnCancelled:
		return exitInterrupted
	}
	if lastErr.ErrorKind != "" && lastErr.ErrorKind != fsm.ErrorOther {
		return exitModel
	}
	return exitFailed
}

// open opens the folder's conversation to run the turn in: the one named,
// else the folder's most recent (a new one unless resuming).
func (r headlessTurn) open() (*workspace.Conversation, error) {
	if r.conversation == "" {
		return r.host.AddFolder(r.folder)
	}
	f, err := r.host.OpenFolder(r.folder)
	if err != nil {
		return nil, err
	}
	return f.Conversation(r.conversation)
}

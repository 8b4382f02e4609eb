package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// Whether the client answers window/showMessageRequest is decided from
// what it is and what it did, not from one optional capability: a client
// that declared window.showMessage, one known by clientInfo.name to
// answer (eglot and lsp-mode answer without declaring it: the capability
// only describes messageActionItem support, LSP 3.16), or one that has
// answered once (this question or any other request of ours: eglot 1.9
// sends no clientInfo, but answers workspace/configuration), is asked and
// waited for; any other client is asked with
// a short first wait (Vim's ALE never answers, and a turn must not hang
// on it), and one that did not answer then is told so once and never
// asked again on this connection.

// DefaultFirstAnswerWait is how long a client not known to answer
// window/showMessageRequest is waited for the first time.
const DefaultFirstAnswerWait = 5 * time.Second

// askNudge is how long after a question loom writes a log line saying it
// waits (see askClient).
const askNudge = 250 * time.Millisecond

// askState is what the server learnt of its client's answers.
type askState int

const (
	askUntried askState = iota // never asked, or no answer yet
	askAnswers                 // it answered a request
	askNever                   // it did not answer the first one: not asked again
)

// requestAnswerers are clientInfo.name prefixes (lower case) of clients
// that answer window/showMessageRequest whether or not they declared
// window.showMessage.
var requestAnswerers = []string{
	"eglot", "emacs", "lsp-mode", // eglot says "Eglot", lsp-mode "emacs"
	"neovim", "nvim", "helix", "kakoune", "kak-lsp", "kak_lsp",
	"sublime", "coc", "vim-lsp", "zed", "lapce", "visual studio code",
	"vscode", "code - oss", "vscodium", "jetbrains", "intellij", "lsp4ij",
}

// answersRequests reports whether a client of this clientInfo.name is
// known to answer window/showMessageRequest.
func answersRequests(name string) bool {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, p := range requestAnswerers {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// noAnswerWords tells the user, once, that the editor did not answer.
func noAnswerWords(wait time.Duration) string {
	return fmt.Sprintf("Loom asked this editor a question (window/showMessageRequest) and got no answer within %s, "+
		"so it will not ask again in this session: commands that need approval are not run, and changes under review "+
		"(tools.edits = \"review\") are not made. To let the agent work here, set tools.bash = \"allow\" or "+
		"tools.edits = \"auto\" in loom.toml.", wait)
}

// cannotAskWords is why a command was not run in a client that does not
// answer.
const cannotAskWords = `commands need the user's approval (tools.bash = "ask") and this editor does not answer Loom's questions ` +
	`(window/showMessageRequest); set tools.bash = "allow" in loom.toml to let the agent run commands`

// errNoAnswer is ErrUnsupported saying why in the words of this client.
var errNoAnswer = &workspace.CannotAskError{Why: cannotAskWords}

// askClient sends window/showMessageRequest with params and decodes the
// item picked into result. It returns an error wrapping
// workspace.ErrUnsupported when the client does not answer such
// requests: it cannot (method not found), or it did not answer the first
// one in time.
func (s *Server) askClient(ctx context.Context, question string, params, result any) error {
	s.mu.Lock()
	state := s.asks
	trusted := s.caps.showMessageRequest || s.caps.knownAsker || s.caps.loom || s.answered.Load()
	wait := s.opts.FirstAnswerWait
	s.mu.Unlock()
	if state == askNever {
		return errNoAnswer
	}
	callCtx := ctx
	if !trusted && state == askUntried {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	// A client may leave the request unread until more output comes:
	// eglot 1.9's jsonrpc stops parsing a chunk at the reply its
	// synchronous request waits for (loom.ask's), and a request right
	// behind it in the same chunk waits for the next output. A log line
	// a moment later is that output.
	nudge := time.AfterFunc(askNudge, func() {
		s.logMessage(protocol.MessageTypeInfo, "Loom is waiting for your answer: "+firstLine(question))
	})
	err := s.callClient(callCtx, protocol.MethodWindowShowMessageRequest, params, result)
	nudge.Stop()
	switch {
	case err == nil:
		s.setAsks(askAnswers)
		return nil
	case errors.Is(err, jsonrpc2.ErrMethodNotFound):
		s.setAsks(askNever)
		return errNoAnswer
	case callCtx != ctx && callCtx.Err() != nil && ctx.Err() == nil:
		if s.setAsks(askNever) {
			s.showMessage(protocol.MessageTypeWarning, noAnswerWords(wait))
		}
		return errNoAnswer
	}
	return fmt.Errorf("window/showMessageRequest: %w", err)
}

// setAsks records what the client did; it reports whether the state
// changed. A client that answered once is never marked silent.
func (s *Server) setAsks(st askState) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asks == st || (st == askNever && s.asks == askAnswers) {
		return false
	}
	s.asks = st
	return true
}

package fsm

import "fmt"

// A server may cut a prompt that does not fit its window instead of
// refusing it: Ollama runs a model with num_ctx tokens (often far fewer
// than it was trained with) and silently drops the oldest messages — the
// user's request first. The only trace is the response's
// usage.prompt_tokens, far below what was sent. The machine then says so,
// takes that size as the window the server really has (cutWindow, never
// above Config.ContextWindow), drops the answer made from a cut prompt,
// and compacts and resends as after a context-length error. The lowered
// window is told (CutWindow, for loom.status) and forgotten on Reset, a
// model switch or a new configured window.
//
// What the server read is its prompt_tokens plus its cached tokens when
// it reports them: some servers count in prompt_tokens only the tokens
// they did not have in their cache (llama.cpp's processed tokens,
// Anthropic's input_tokens), and a prompt served mostly from the cache
// is no cut.

// cutMinTokens is how far below the estimate prompt_tokens must fall, in
// tokens, to be taken as a cut: estimates are rough (bytes/4).
const cutMinTokens = 1024

// serverCut is what a cut prompt showed of the window the server really
// has: window, when positive, bounds Config.ContextWindow; why says how it
// was learned. Both are forgotten on Reset, on a model switch and when the
// configured window changes.
type serverCut struct {
	window int64
	why    string
}

// budget is the context window the machine budgets with: the configured
// one, bounded by what a cut prompt showed.
func (c serverCut) budget(configured int) int64 {
	w := int64(configured)
	if c.window > 0 && (w <= 0 || c.window < w) {
		return c.window
	}
	return w
}

// forget drops what a cut prompt showed.
func (c *serverCut) forget() {
	c.window, c.why = 0, ""
}

// window is the context window the machine budgets with.
func (m *Machine) window() int64 {
	return m.cut.budget(m.cfg.ContextWindow)
}

// promptCut reports whether the server read far less than it was sent
// (sent: the estimate): under three quarters of the estimate, and by more
// than cutMinTokens. (The estimate, bytes/4, is within some 20% of real
// tokenizers' counts, and leaves out the tool schemas, which the server
// counts.) A compaction's prompt is never taken as cut (the caller's
// part).
func promptCut(u Usage, sent int64) bool {
	p := u.PromptTokens
	if p > 0 && u.CachedTokens != nil {
		p += *u.CachedTokens
	}
	return p > 0 && p*4 < sent*3 && sent-p > cutMinTokens
}

// onPromptCut handles a response made from a cut prompt: the window is
// lowered to what the server read plus what it wrote, the text shown is
// retracted, and the conversation is compacted and sent again. A second
// cut in the same turn ends it with the context-length error.
func (m *Machine) onPromptCut(e LlmCompleted) []Action {
	read, sent := e.Usage.PromptTokens, m.sentEstimate
	m.cut.window = read + e.Usage.CompletionTokens
	m.cut.why = fmt.Sprintf("lowered at turn %d: the server read only %d of about %d tokens sent", m.turn, read, sent)
	m.prompt = promptCount{}
	shown, request := m.partial.Len(), m.request
	m.partial.Reset()
	m.streaming = m.streaming[:0]
	what := fmt.Sprintf("the server read only %d of about %d tokens sent: it cut the conversation to fit a smaller context window "+
		"(Ollama: num_ctx; see \"Configure a model\" in the README), so its answer is dropped", read, sent)
	var acts []Action
	if _, _, ok := m.compactable(); ok && !m.ctxRetried {
		acts = m.startCompaction(nil, what, m.prompt.estimate(m.elided.messages(m.history)), compaction{resume: true, afterError: true})
	} else {
		acts = m.minimalError(what)
	}
	return m.retractIfReplaced(acts, request, shown)
}

// CutWindow returns the window a cut prompt showed the server really has
// and why, or 0 and "" when none did (or it was forgotten: Reset, a model
// switch, a new configured window). The machine budgets with it when it
// is below Config.ContextWindow.
func (m *Machine) CutWindow() (int64, string) {
	return m.cut.window, m.cut.why
}

// promptRead is the prompt tokens the server read, from its usage: its
// prompt_tokens, which includes the cached tokens (OpenAI's counting),
// unless the cached tokens exceed it: then the server counted only the
// uncached ones, and read both.
func promptRead(u Usage) int64 {
	if u.CachedTokens != nil && *u.CachedTokens > u.PromptTokens {
		return u.PromptTokens + *u.CachedTokens
	}
	return u.PromptTokens
}

// overflowedEmpty reports whether a response e with no text and no tool
// call is a context overflow (sent: the estimate of the prompt sent;
// window: the window budgeted with). A server may answer a prompt that does not
// fit its loaded context with nothing instead of an error: LM Studio's
// GGUF engine answers HTTP 200 with zero content (lmstudio-bug-tracker
// #2339). When the prompt the server read (or, unreported, the estimate
// of what was sent) reaches the window, the machine compacts and resends
// as after a context-length error, rather than end the turn "done" with
// nothing said.
func overflowedEmpty(e LlmCompleted, sent, w int64) (LlmError, bool) {
	read := promptRead(e.Usage)
	if read == 0 {
		read = sent
	}
	if w <= 0 || read < w {
		return LlmError{}, false
	}
	return LlmError{Kind: ErrorContextLength,
		Message: fmt.Sprintf("the server answered nothing to a prompt of %d tokens, which reaches the model's context window of %d tokens", read, w)}, true
}

// emptyNote is what the model reads after an answer with nothing in it.
const emptyNote = "[loom] your last answer was empty: no text and no tool call. Answer the request again; if you are done, say so in a sentence."

// onEmptyCompletion handles an answer with no text, no call and no
// reasoning well inside the window (an overflowing one is compacted):
// never the silent end of a turn. The first time in a turn the model is
// told (a note) and asked again, after the retry delay the user sees
// (unless retries are off); the second time the turn ends with an error
// the user sees.
func (m *Machine) onEmptyCompletion() []Action {
	const what = "the model answered nothing (no text, no tool call)"
	if m.emptyRetried || m.cfg.MaxRetries < 1 {
		return m.endTurn([]Action{DisplayError{Turn: m.turn, Kind: ErrorOther, Message: what + " again: the turn ends; ask again, or try another model"}}, TurnFailed)
	}
	m.emptyRetried = true
	m.history = append(m.history, Message{Role: RoleUser, Content: emptyNote, Note: true})
	return m.becomeError(LlmError{Kind: ErrorOther, Retryable: true, Message: what + ": asking it once more"})
}

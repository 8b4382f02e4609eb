package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// DefaultIdleTimeout is the idle watchdog's limit when OpenAIConfig leaves
// IdleTimeout zero.
const DefaultIdleTimeout = 60 * time.Second

// DefaultFirstByteTimeout is how long a server may take to answer a request
// (send its response headers) when OpenAIConfig leaves FirstByteTimeout
// zero. Servers send their headers as soon as they start on a request
// (OpenAI, vLLM, llama-server; Ollama once the model is loaded), so 20 s
// of nothing means the server is stuck: four attempts then take at most
// 4 × 20 s plus the backoffs, not four idle timeouts.
const DefaultFirstByteTimeout = 20 * time.Second

// OpenAIConfig configures an [OpenAI] provider.
type OpenAIConfig struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1" or
	// "http://localhost:11434/v1". Required.
	BaseURL string
	// Model is the model name sent with each request. Required.
	Model string
	// APIKey is the key itself (the caller reads it from the environment
	// variable named in config). Empty sends no Authorization header, for
	// local servers. It is never logged.
	APIKey string
	// MaxTokens, when positive, bounds each completion: sent as
	// max_tokens or max_completion_tokens, per MaxTokensField.
	MaxTokens int
	// MaxTokensField is "max_tokens", "max_completion_tokens", or ""
	// (or "auto") to choose from the model's name: see
	// [UsesMaxCompletionTokens].
	MaxTokensField string
	// Temperature, when set, is sent as temperature.
	Temperature *float64
	// Headers are extra HTTP headers sent with every request.
	Headers map[string]string
	// IdleTimeout is how long the server may send nothing between bytes
	// of the response body before the request fails with a retryable
	// ErrorIdle. Zero means DefaultIdleTimeout. There is deliberately no
	// whole-request timeout.
	IdleTimeout time.Duration
	// FirstByteTimeout is how long the server may take to send its
	// response headers before the request fails with a retryable
	// ErrorIdle. Zero means DefaultFirstByteTimeout.
	FirstByteTimeout time.Duration
	// HTTPClient, if set, sends the requests. Its Timeout should be zero:
	// a whole-request timeout kills long, healthy streams.
	HTTPClient *http.Client
	// Server names the server's dialect (model.server: "ollama",
	// "llamacpp", "vllm", "lmstudio", "deepseek", "gemini", "mistral",
	// "openrouter", "anthropic", "openai"); "" detects it (see [Dialect]).
	Server string
	// MaxAnswerBytes, when positive, caps the text and reasoning of one
	// response: past it the stream is cut and the request fails with a
	// non-retryable error. Zero means DefaultMaxAnswerBytes.
	MaxAnswerBytes int
	// API is the wire API: APIChat, APIResponses, or "" to choose per
	// model (see [DefaultAPI]) and to switch to the Responses API when the
	// server says a model is served only there.
	API string
	// ReasoningEffort, when set, is sent as each API spells it
	// (reasoning_effort, reasoning.effort): one of [ReasoningEfforts].
	ReasoningEffort string
	// CacheKeys sends each request's CacheKey as prompt_cache_key
	// (OpenAI's API, where it routes requests with a shared prefix to the
	// same cache). Set for api.openai.com unless configured.
	CacheKeys bool
	// EncodeEveryMessage makes each request encode all of its messages
	// instead of reusing their encodings from earlier requests: the
	// reference the benchmarks measure the cache against.
	EncodeEveryMessage bool
}

// OpenAI is a [Provider] for the OpenAI Chat Completions streaming API and
// the many servers compatible with it. It is safe for concurrent use.
//
// The request is built and sent by openai-go (with its retries disabled:
// retrying is the state machine's job), but the response is decoded here
// rather than by openai-go's ssestream: that decoder treats a body that
// ends without "data: [DONE]" as a clean end, and hides the tool-call
// index's absence. Decoding ourselves also keeps raw error bodies, and
// lets the idle watchdog see every read.
//
// LlmToolCallDelta.Index is the call's position in LlmCompleted.ToolCalls
// (calls are keyed by the server's index, else by id), not the raw wire
// index. Reasoning that servers stream (delta.reasoning_content or
// delta.reasoning, which openai-go's chunk type does not have) becomes
// fsm.LlmReasoningDelta; it is shown, never sent back to the model.
// Usage (requested with stream_options.include_usage) keeps
// prompt_tokens_details.cached_tokens and
// completion_tokens_details.reasoning_tokens when the server reports them.
type OpenAI struct {
	cfg    OpenAIConfig
	client openai.Client
	// cache keeps the encoded messages of the last request.
	cache messageCache
	// dialect is the server's dialect; see dialect.go.
	dialect dialectState
	// probes are the discovery paths the server does not serve.
	probes probeMemory
	// responsesOnly holds the models the server said are served only by
	// the Responses API (guarded by dialect.mu).
	responsesOnly map[string]bool
	// imagesSaid is what the model listing said of the configured
	// model's pictures, nil when nothing (guarded by dialect.mu).
	imagesSaid *bool
	// noSummary is set once the server refused reasoning summaries
	// (an unverified organization): they are not asked for again
	// (guarded by dialect.mu).
	noSummary bool
}

// check refuses a configuration NewOpenAI cannot serve: no base URL or
// model, an unknown max tokens field, api or reasoning effort, a
// negative timeout or answer cap.
func (cfg OpenAIConfig) check() error {
	if strings.TrimSpace(cfg.BaseURL) == "" {
		return errors.New("openai provider: base_url is empty")
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return errors.New("openai provider: model is empty")
	}
	switch cfg.MaxTokensField {
	case "", "auto", "max_tokens", "max_completion_tokens":
	default:
		return fmt.Errorf("openai provider: unknown max tokens field %q", cfg.MaxTokensField)
	}
	if cfg.IdleTimeout < 0 {
		return fmt.Errorf("openai provider: idle timeout %s is negative", cfg.IdleTimeout)
	}
	if cfg.FirstByteTimeout < 0 {
		return fmt.Errorf("openai provider: first-byte timeout %s is negative", cfg.FirstByteTimeout)
	}
	switch cfg.API {
	case "", APIChat, APIResponses:
	default:
		return fmt.Errorf("openai provider: unknown api %q (want %q or %q)", cfg.API, APIChat, APIResponses)
	}
	if !ValidReasoningEffort(cfg.ReasoningEffort) {
		return fmt.Errorf("openai provider: unknown reasoning effort %q (want one of %s)", cfg.ReasoningEffort, strings.Join(reasoningEfforts, ", "))
	}
	if cfg.MaxAnswerBytes < 0 {
		return fmt.Errorf("openai provider: max answer bytes %d is negative", cfg.MaxAnswerBytes)
	}
	return nil
}

// NewOpenAI checks cfg and returns a provider. It reads no environment
// variable: in particular OPENAI_API_KEY is never sent unless given as
// cfg.APIKey.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.MaxAnswerBytes == 0 {
		cfg.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	var ds dialectState
	if cfg.Server != "" {
		d, ok := DialectByName(cfg.Server)
		if !ok {
			return nil, fmt.Errorf("openai provider: unknown server %q (want one of %s)", cfg.Server, strings.Join(DialectNames(), ", "))
		}
		ds.set(d, true)
	} else if d, sure := DialectForURL(cfg.BaseURL); d != nil {
		ds.set(d, sure)
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.FirstByteTimeout == 0 {
		cfg.FirstByteTimeout = DefaultFirstByteTimeout
	}
	hc := cfg.HTTPClient
	if hc == nil {
		// No client or header timeout: the idle watchdog is the only limit.
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	base := cfg.BaseURL
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		// Override whatever openai.NewClient picked up from OPENAI_*
		// variables: only the configured key and headers go out.
		option.WithAPIKey(cfg.APIKey),
		option.WithHeaderDel("OpenAI-Organization"),
		option.WithHeaderDel("OpenAI-Project"),
		option.WithHeader("Accept", "text/event-stream"),
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	p := &OpenAI{cfg: cfg, client: openai.NewClient(opts...)}
	p.dialect.copyFrom(&ds)
	return p, nil
}

// Stream sends req and streams the response; see [Provider]. The wire API
// is the Chat Completions API or the Responses API, per [OpenAI.API].
func (p *OpenAI) Stream(ctx context.Context, req Request, emit func(fsm.Event)) {
	finished := false
	finish := func(ev fsm.Event) {
		if !finished && ctx.Err() == nil {
			finished = true
			emit(ev)
		}
	}
	defer recoverStream(ctx, req.ID, &finished, emit)
	if p.API(req.Model) == APIResponses {
		p.streamResponses(ctx, req, emit, finish)
		return
	}
	d := p.Dialect()
	reqBody, err := p.requestBody(d, req)
	if err != nil {
		finish(fsm.LlmError{Request: req.ID, Kind: fsm.ErrorBadRequest,
			Message: "cannot build the model request: " + err.Error()})
		return
	}
	x, fail := p.post(ctx, req.ID, "chat/completions", reqBody)
	defer x.close()
	if fail != nil {
		if p.switchToResponses(req.Model, *fail) {
			p.streamResponses(ctx, req, emit, finish)
			return
		}
		finish(*fail)
		return
	}
	if x.body == nil {
		return // cancelled
	}
	p.decode(ctx, x.sctx, p.Dialect(), req.ID, x.body, emit, finish)
}

// exchange is one request sent and its response being read.
type exchange struct {
	// sctx ends with the caller's context or when the idle watchdog
	// fires (its cause is then errIdle).
	sctx context.Context
	// body is the response body, watched by the idle watchdog; nil when
	// the caller's context ended.
	body  io.Reader
	close func()
}

// post sends body to path and waits for the response's headers. A
// failure (an HTTP error status, a transport error, a JSON body instead
// of an event stream) is returned as the LlmError to finish with; a
// cancelled ctx returns neither body nor error. The caller calls close.
func (p *OpenAI) post(ctx context.Context, reqID uint64, path string, reqBody []byte) (exchange, *fsm.LlmError) {
	sctx, cancel := context.WithCancelCause(ctx)
	wd := newWatchdog(p.cfg.IdleTimeout, func() { cancel(errIdle) })
	var resp *http.Response
	x := exchange{sctx: sctx}
	x.close = func() {
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		wd.stop()
		cancel(nil)
	}
	wd.armFor(p.cfg.FirstByteTimeout)
	err := p.client.Post(sctx, path, reqBody, &resp)
	wd.disarm()
	if ctx.Err() != nil {
		return x, nil
	}
	if resp != nil {
		p.noteServerHeader(resp.Header.Get("Server"))
	}
	d := p.Dialect()
	if err != nil || resp == nil || resp.StatusCode >= 300 {
		e := p.responseError(sctx, d, reqID, resp, err)
		return x, &e
	}
	body := &watchedReader{r: resp.Body, wd: wd}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		e := p.jsonInsteadOfStream(sctx, d, reqID, body)
		return x, &e
	}
	x.body = body
	return x, nil
}

// jsonInsteadOfStream handles a success status with a JSON body instead
// of an event stream: some proxies send errors that way, and a server that
// ignores "stream": true answers with a whole completion.
func (p *OpenAI) jsonInsteadOfStream(sctx context.Context, d *Dialect, reqID uint64, body io.Reader) fsm.LlmError {
	b, err := io.ReadAll(io.LimitReader(body, 64<<10))
	if err != nil {
		if errors.Is(context.Cause(sctx), errIdle) {
			return idleError(reqID, p.cfg.IdleTimeout)
		}
		return transportError(reqID, err, true)
	}
	var probe wireChunk
	if json.Unmarshal(b, &probe) == nil && len(probe.Error) > 0 && string(probe.Error) != "null" {
		return streamErrorEvent(d, reqID, b)
	}
	return fsm.LlmError{Request: reqID, Kind: fsm.ErrorStream,
		Message: "the provider answered with JSON instead of an event stream (does it support streaming?): " + capText(string(b))}
}

// responseError classifies a failed request: an HTTP error status, or a
// transport error before any response (the first-byte watchdog's, when it
// fired).
func (p *OpenAI) responseError(sctx context.Context, d *Dialect, reqID uint64, resp *http.Response, err error) fsm.LlmError {
	if errors.Is(context.Cause(sctx), errIdle) {
		return firstByteError(reqID, p.cfg.FirstByteTimeout)
	}
	if resp != nil && resp.StatusCode >= 300 {
		var body []byte
		if resp.Body != nil {
			body, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		}
		return statusError(d, reqID, resp.StatusCode, resp.Header, body)
	}
	if err == nil {
		err = errors.New("no response")
	}
	return transportError(reqID, err, false)
}

// DefaultMaxAnswerBytes caps the text and reasoning of one response when
// OpenAIConfig leaves MaxAnswerBytes zero: far more than any real answer,
// small enough that a server streaming without end cannot exhaust memory.
const DefaultMaxAnswerBytes = 4 << 20

// decode reads the event stream, emitting deltas as they come and one
// final event. ctx is the caller's context; sctx also ends when the idle
// watchdog fires.
func (p *OpenAI) decode(ctx, sctx context.Context, d *Dialect, reqID uint64, body io.Reader,
	emit func(fsm.Event), finish func(fsm.Event)) {
	sse := newSSEReader(body)
	st := chatStream{d: d, reqID: reqID, maxAnswer: p.cfg.MaxAnswerBytes, emit: emit}
	for {
		data, kind, err := sse.next()
		if ctx.Err() != nil {
			return
		}
		switch {
		case kind == sseDone:
			finish(st.completed())
			return
		case err != nil:
			finish(p.streamReadError(sctx, reqID, err))
			return
		case kind == sseError:
			finish(streamErrorEvent(d, reqID, data))
			return
		}
		if end := st.chunk(data); end != nil {
			finish(end)
			return
		}
	}
}

// streamReadError is the end of a stream that could not be read: the
// idle watchdog fired, the server closed it before [DONE], or the
// connection failed.
func (p *OpenAI) streamReadError(sctx context.Context, reqID uint64, err error) fsm.Event {
	switch {
	case errors.Is(context.Cause(sctx), errIdle):
		return idleError(reqID, p.cfg.IdleTimeout)
	case errors.Is(err, errNoDone):
		return fsm.LlmError{Request: reqID, Kind: fsm.ErrorStream, Retryable: true,
			Message: "the provider closed the stream before it was complete (" + err.Error() + ")"}
	}
	return transportError(reqID, err, true)
}

// chatStream is what a Chat Completions stream gave so far.
type chatStream struct {
	d         *Dialect
	reqID     uint64
	maxAnswer int
	emit      func(fsm.Event)

	acc       toolAccumulator
	usage     fsm.Usage
	reason    string
	answered  int             // bytes of text and reasoning so far
	reasoning strings.Builder // kept only when the dialect echoes it
	details   detailsAcc      // OpenRouter's reasoning_details
}

// completed is the stream's final event, after [DONE].
func (st *chatStream) completed() fsm.LlmCompleted {
	done := fsm.LlmCompleted{Request: st.reqID, ToolCalls: st.acc.result(st.reqID), Usage: st.usage, FinishReason: st.reason}
	if st.d.EchoReasoning {
		done.Reasoning = st.reasoning.String()
	}
	if data := st.details.data(); st.d.EchoDetails && data != "" {
		done.Opaque = fsm.Opaque{API: opaqueOpenRouter, Data: data}
	}
	return done
}

// chunk reads one chunk of the stream and emits its deltas; it returns
// the stream's end when the chunk ends it (malformed, an error, an
// answer past its cap), nil to read on.
func (st *chatStream) chunk(data []byte) fsm.Event {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil // an empty keep-alive event some proxies send
	}
	var chunk wireChunk
	if err := chunk.unmarshal(data); err != nil {
		return fsm.LlmError{Request: st.reqID, Kind: fsm.ErrorStream,
			Message: fmt.Sprintf("the provider sent a malformed chunk (%v): %s", err, capText(string(data)))}
	}
	if (len(chunk.Error) > 0 && string(chunk.Error) != "null") || chunk.Object == "error" {
		return streamErrorEvent(st.d, st.reqID, data)
	}
	if chunk.Usage != nil {
		st.usage = chunk.Usage.usage()
	}
	for i := range chunk.Choices {
		if ch := &chunk.Choices[i]; ch.Index == 0 { // only one choice is requested
			if end := st.choice(ch); end != nil {
				return end
			}
		}
	}
	return nil
}

// choice emits a choice's deltas: reasoning, text, tool calls.
func (st *chatStream) choice(ch *wireChoice) fsm.Event {
	if st.d.EchoDetails && len(ch.Delta.ReasoningDetails) > 0 {
		st.details.add(ch.Delta.ReasoningDetails)
	}
	r := ch.Delta.reasoning()
	st.answered += len(r) + len(ch.Delta.Content)
	if st.answered > st.maxAnswer {
		return fsm.LlmError{Request: st.reqID, Kind: fsm.ErrorStream,
			Message: fmt.Sprintf("the answer passed %s (model.max_answer_bytes): the stream was cut; ask for less at once, or raise the limit", byteSize(st.maxAnswer))}
	}
	if r != "" {
		if st.d.EchoReasoning {
			st.reasoning.WriteString(r)
		}
		st.emit(fsm.LlmReasoningDelta{Request: st.reqID, Text: r})
	}
	if ch.Delta.Content != "" {
		st.emit(fsm.LlmTextDelta{Request: st.reqID, Text: ch.Delta.Content})
	}
	for j := range ch.Delta.ToolCalls {
		tc := &ch.Delta.ToolCalls[j]
		pos := st.acc.add(tc)
		st.emit(fsm.LlmToolCallDelta{Request: st.reqID, Index: pos, ID: tc.ID,
			Name: tc.Function.Name, ArgumentsDelta: tc.Function.Arguments})
	}
	if ch.FinishReason != "" {
		st.reason = ch.FinishReason
	}
	return nil
}

// byteSize writes n as "4 MB", "512 KB" or "300 bytes".
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", (n+512)>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// watchdog fires when armed for longer than its limit. It is armed only
// while waiting for the server, so a slow consumer of the events never
// trips it.
type watchdog struct {
	limit time.Duration
	t     *time.Timer
	once  sync.Once
}

func newWatchdog(limit time.Duration, fire func()) *watchdog {
	t := time.AfterFunc(time.Hour, fire)
	t.Stop()
	return &watchdog{limit: limit, t: t}
}

func (w *watchdog) arm()                       { w.t.Reset(w.limit) }
func (w *watchdog) armFor(limit time.Duration) { w.t.Reset(limit) }
func (w *watchdog) disarm()                    { w.t.Stop() }
func (w *watchdog) stop()                      { w.once.Do(func() { w.t.Stop() }) }

// watchedReader arms the watchdog around every read of the body.
type watchedReader struct {
	r  io.Reader
	wd *watchdog
}

func (w *watchedReader) Read(b []byte) (int, error) {
	w.wd.arm()
	n, err := w.r.Read(b)
	w.wd.disarm()
	return n, err
}

// recoverStream turns a panic inside a provider into its final LlmError,
// unless the final event was already emitted or ctx is cancelled. A panic
// raised by emit itself is swallowed rather than re-raised.
func recoverStream(ctx context.Context, reqID uint64, finished *bool, emit func(fsm.Event)) {
	r := recover()
	if r == nil || *finished || ctx.Err() != nil {
		return
	}
	*finished = true
	defer func() { _ = recover() }()
	emit(fsm.LlmError{Request: reqID, Kind: fsm.ErrorOther,
		Message: fmt.Sprintf("internal error in the model provider: %v", r)})
}

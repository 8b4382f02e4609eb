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

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// This file speaks Anthropic's Messages API (POST /v1/messages), which
// Anthropic's own API serves, and Ollama, llama.cpp and LM Studio too.
// The request is built with anthropic-sdk-go's types; the event stream is
// decoded here (anthropic_decode.go), like the OpenAI ones, so that a cut
// body is an error and thinking blocks are kept byte for byte.
//
// Thinking blocks, with their signatures, are kept as the assistant
// message's fsm.Opaque and sent back unchanged before its text and
// tool_use blocks, in the turn and every later one (the API requires them
// before each tool_result, and a prefix that never changes is what its
// cache reads). Up to four cache_control breakpoints mark the stable
// prefix: the last tool, the system prompt, the end of the previous turn
// and the last message.

// opaqueMessages names the Messages API's opaque data: a JSON array of
// thinking and redacted_thinking blocks, as the server streamed them.
const opaqueMessages = "messages"

// AnthropicVersion is the anthropic-version header sent with each request.
const AnthropicVersion = "2023-06-01"

// DefaultAnthropicMaxTokens bounds each answer when AnthropicConfig leaves
// MaxTokens zero: the Messages API requires max_tokens.
const DefaultAnthropicMaxTokens = 16384

// AnthropicConfig configures an [Anthropic] provider.
type AnthropicConfig struct {
	// BaseURL is the API root, "https://api.anthropic.com" (a trailing
	// "/v1" is accepted). Required.
	BaseURL string
	// Model is the model name sent with each request. Required.
	Model string
	// APIKey is sent as x-api-key; never logged. Empty sends none (local
	// servers).
	APIKey string
	// MaxTokens bounds each answer; zero means DefaultAnthropicMaxTokens.
	MaxTokens int
	// ReasoningEffort, when set and not "none", turns thinking on: an
	// effort (output_config.effort, adaptive thinking) for the models that
	// take one, a thinking budget for the others.
	ReasoningEffort string
	// Headers are extra HTTP headers sent with every request.
	Headers map[string]string
	// IdleTimeout, FirstByteTimeout, MaxAnswerBytes and HTTPClient are as
	// in OpenAIConfig.
	IdleTimeout      time.Duration
	FirstByteTimeout time.Duration
	MaxAnswerBytes   int
	HTTPClient       *http.Client
}

// Anthropic is a [Provider] for Anthropic's Messages API. It is safe for
// concurrent use.
type Anthropic struct {
	cfg  AnthropicConfig
	root string // BaseURL without a trailing "/" or "/v1"
	// mu guards infos: what the server said of each model
	// (anthropic_models.go).
	mu    sync.Mutex
	infos map[string]*antModelInfo
}

// NewAnthropic checks cfg and returns a provider. It reads no environment
// variable.
func NewAnthropic(cfg AnthropicConfig) (*Anthropic, error) {
	if strings.TrimSpace(cfg.BaseURL) == "" {
		return nil, errors.New("anthropic provider: base_url is empty")
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("anthropic provider: model is empty")
	}
	if !ValidReasoningEffort(cfg.ReasoningEffort) {
		return nil, fmt.Errorf("anthropic provider: unknown reasoning effort %q", cfg.ReasoningEffort)
	}
	if cfg.MaxTokens < 0 || cfg.IdleTimeout < 0 || cfg.FirstByteTimeout < 0 || cfg.MaxAnswerBytes < 0 {
		return nil, errors.New("anthropic provider: negative limit")
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = DefaultAnthropicMaxTokens
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.FirstByteTimeout == 0 {
		cfg.FirstByteTimeout = DefaultFirstByteTimeout
	}
	if cfg.MaxAnswerBytes == 0 {
		cfg.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	root := strings.TrimSuffix(strings.TrimRight(cfg.BaseURL, "/"), "/v1")
	return &Anthropic{cfg: cfg, root: root}, nil
}

// Stream sends req and streams the response; see [Provider].
func (p *Anthropic) Stream(ctx context.Context, req Request, emit func(fsm.Event)) {
	finished := false
	finish := func(ev fsm.Event) {
		if !finished && ctx.Err() == nil {
			finished = true
			emit(ev)
		}
	}
	defer recoverStream(ctx, req.ID, &finished, emit)
	model := p.cfg.Model
	if req.Model != "" {
		model = req.Model
	}
	var info *anthropic.ModelInfo
	if e := pickEffort(p.cfg.ReasoningEffort, req.ReasoningEffort); e != "" && e != "none" {
		// Which thinking the model takes, asked once per model.
		info = p.modelInfo(ctx, model)
	}
	body, err := p.requestBody(req, info)
	if err != nil {
		finish(fsm.LlmError{Request: req.ID, Kind: fsm.ErrorBadRequest,
			Message: "cannot build the model request: " + err.Error()})
		return
	}
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	wd := newWatchdog(p.cfg.IdleTimeout, func() { cancel(errIdle) })
	defer wd.stop()
	hr, err := http.NewRequestWithContext(sctx, http.MethodPost, p.root+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		finish(fsm.LlmError{Request: req.ID, Kind: fsm.ErrorBadRequest, Message: "cannot build the model request: " + err.Error()})
		return
	}
	p.setHeaders(hr.Header)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	wd.armFor(p.cfg.FirstByteTimeout)
	resp, err := p.cfg.HTTPClient.Do(hr)
	wd.disarm()
	if resp != nil {
		defer resp.Body.Close()
	}
	if ctx.Err() != nil {
		return
	}
	d := dialects["anthropic"]
	switch {
	case err != nil && errors.Is(context.Cause(sctx), errIdle):
		finish(firstByteError(req.ID, p.cfg.FirstByteTimeout))
		return
	case err != nil:
		finish(transportError(req.ID, err, false))
		return
	case resp.StatusCode >= 300:
		b, _ := readCapped(resp.Body)
		finish(statusError(d, req.ID, resp.StatusCode, resp.Header, b))
		return
	}
	p.decode(ctx, sctx, req.ID, &watchedReader{r: resp.Body, wd: wd}, emit, finish)
}

// setHeaders sets the key, the API version and the configured headers.
func (p *Anthropic) setHeaders(h http.Header) {
	h.Set("anthropic-version", AnthropicVersion)
	if p.cfg.APIKey != "" {
		h.Set("x-api-key", p.cfg.APIKey)
	}
	for k, v := range p.cfg.Headers {
		h.Set(k, v)
	}
}

// requestBody is the JSON body of req, with "stream": true; info is
// what the server said of the model (nil: nothing).
func (p *Anthropic) requestBody(req Request, info *anthropic.ModelInfo) ([]byte, error) {
	params, err := p.params(req, info)
	if err != nil {
		return nil, err
	}
	b, err := params.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("unexpected request encoding %.40q", b)
	}
	return append(b[:len(b)-1], streamField...), nil
}

// params builds the request: the system prompt, the conversation as
// alternating user and assistant messages (tool results in the user
// message after the calls), the tools, max_tokens, thinking per the
// effort, and the cache breakpoints.
func (p *Anthropic) params(req Request, info *anthropic.ModelInfo) (anthropic.MessageNewParams, error) {
	model := p.cfg.Model
	if req.Model != "" {
		model = req.Model
	}
	params := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: int64(p.cfg.MaxTokens)}
	effort := pickEffort(p.cfg.ReasoningEffort, req.ReasoningEffort)
	if !thinkingFromInfo(info, effort, &params) {
		p.setThinking(model, effort, &params)
	}
	conv, err := antConversationOf(req)
	if err != nil {
		return params, err
	}
	params.System = append(params.System, conv.system...)
	msgs, turnEnd := conv.turns, conv.turnEnd
	for _, t := range req.Tools {
		tool, err := anthropicTool(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	blocks := make([][]anthropic.ContentBlockParamUnion, len(msgs))
	for i := range msgs {
		blocks[i] = msgs[i].blocks
	}
	markCache(&params, blocks, turnEnd)
	for _, m := range msgs {
		if m.assistant {
			params.Messages = append(params.Messages, anthropic.MessageParam{OfAssistant: &anthropic.AssistantMessageParam{Content: m.blocks}})
		} else {
			params.Messages = append(params.Messages, anthropic.MessageParam{OfUser: &anthropic.UserMessageParam{Content: m.blocks}})
		}
	}
	return params, nil
}

// antTurn is one message of an Anthropic request: user and assistant
// alternate, so consecutive messages of one side join.
type antTurn struct {
	assistant bool
	blocks    []anthropic.ContentBlockParamUnion
}

// antConversation is a request's conversation as Anthropic takes it.
type antConversation struct {
	// system are the system messages' texts, the empty ones left out.
	system []anthropic.TextBlockParam
	turns  []antTurn
	// turnEnd is the index in turns of the last message before the
	// current turn; -1 when none.
	turnEnd int
}

// antConversationOf gathers req's messages: system texts apart, the
// others as alternating turns (tool results join the user's side).
func antConversationOf(req Request) (antConversation, error) {
	c := antConversation{turnEnd: -1}
	for i, m := range req.Messages {
		if m.Role == fsm.RoleSystem {
			if m.Content != "" {
				c.system = append(c.system, anthropic.TextBlockParam{Text: m.Content})
			}
			continue
		}
		blocks, err := contentBlocks(m, req.Images)
		if err != nil {
			return c, fmt.Errorf("message %d: %w", i, err)
		}
		if len(blocks) == 0 {
			continue
		}
		c.add(m.Role == fsm.RoleAssistant, blocks)
		if i < req.TurnStart {
			c.turnEnd = len(c.turns) - 1
		}
	}
	return c, nil
}

// add appends blocks to the last turn when it is the same side's, else
// as a new turn.
func (c *antConversation) add(assistant bool, blocks []anthropic.ContentBlockParamUnion) {
	if n := len(c.turns); n > 0 && c.turns[n-1].assistant == assistant {
		c.turns[n-1].blocks = append(c.turns[n-1].blocks, blocks...)
		return
	}
	c.turns = append(c.turns, antTurn{assistant: assistant, blocks: blocks})
}

// markCache sets the cache breakpoints, at most four: the last tool (the
// tools come first in the prompt), the last system block, the last
// message before the current turn (what the previous turn's requests
// cached), and the last message.
func markCache(params *anthropic.MessageNewParams, msgs [][]anthropic.ContentBlockParamUnion, turnEnd int) {
	eph := anthropic.NewCacheControlEphemeralParam()
	if n := len(params.Tools); n > 0 {
		params.Tools[n-1].OfTool.CacheControl = eph
	}
	if n := len(params.System); n > 0 {
		params.System[n-1].CacheControl = eph
	}
	mark := func(i int) {
		if i < 0 || i >= len(msgs) {
			return
		}
		blocks := msgs[i]
		for j := len(blocks) - 1; j >= 0; j-- {
			if cc := blocks[j].GetCacheControl(); cc != nil {
				*cc = eph
				return
			}
		}
	}
	last := len(msgs) - 1
	if turnEnd != last {
		mark(turnEnd)
	}
	mark(last)
}

// contentBlocks converts one conversation message: a user message's text,
// a tool result, or an assistant message's thinking blocks (when a
// Messages server wrote them), text and tool_use blocks. Empty text is
// left out: the API refuses empty text blocks. A user message's pictures
// are read through images.
func contentBlocks(m fsm.Message, images ImageSource) ([]anthropic.ContentBlockParamUnion, error) {
	switch m.Role {
	case fsm.RoleUser:
		return anthropicUserBlocks(m, images)
	case fsm.RoleTool:
		if m.ToolCallID == "" {
			return nil, errors.New("tool message without tool_call_id")
		}
		r := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
		if m.Content != "" {
			r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Content}}}
		}
		return []anthropic.ContentBlockParamUnion{{OfToolResult: &r}}, nil
	case fsm.RoleAssistant:
		var blocks []anthropic.ContentBlockParamUnion
		if m.Opaque.API == opaqueMessages {
			var kept []json.RawMessage
			if err := json.Unmarshal([]byte(m.Opaque.Data), &kept); err == nil {
				for _, raw := range kept {
					blocks = append(blocks, param.Override[anthropic.ContentBlockParamUnion](raw))
				}
			}
		}
		if m.Content != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Content))
		}
		for _, c := range m.ToolCalls {
			args := json.RawMessage(c.Arguments)
			if !json.Valid(args) {
				args = json.RawMessage("{}")
			}
			blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, args, c.Name))
		}
		return blocks, nil
	}
	return nil, fmt.Errorf("unknown role %q", m.Role)
}

// anthropicTool converts one tool schema: input_schema keeps the
// parameters' top-level members as raw JSON.
func anthropicTool(t ToolSchema) (anthropic.ToolParam, error) {
	tool := anthropic.ToolParam{Name: t.Name}
	if t.Description != "" {
		tool.Description = anthropic.String(t.Description)
	}
	raw := bytes.TrimSpace(t.Parameters)
	if len(raw) == 0 {
		raw = []byte(`{"type":"object","properties":{}}`)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return tool, fmt.Errorf("tool %q: parameters are not a JSON object", t.Name)
	}
	extra := make(map[string]any, len(fields))
	for k, v := range fields {
		switch k {
		case "type":
		case "properties":
			tool.InputSchema.Properties = v
		default:
			extra[k] = v
		}
	}
	if tool.InputSchema.Properties == nil {
		tool.InputSchema.Properties = json.RawMessage("{}")
	}
	if len(extra) > 0 {
		tool.InputSchema.ExtraFields = extra
	}
	return tool, nil
}

// ContextWindow is the model's window from the table of known models:
// Anthropic's API does not tell it (every Claude model: 200,000 tokens).
func (p *Anthropic) ContextWindow(ctx context.Context) (Window, error) {
	if w, ok := windowFromInfo(p.modelInfo(ctx, p.cfg.Model), p.cfg.Model); ok {
		return w, nil
	}
	if n, ok := KnownContextWindow(p.cfg.Model); ok {
		return Window{Tokens: n, Source: "known window of " + p.cfg.Model}, nil
	}
	return Window{}, fmt.Errorf("%w: %s is not in the table of known models", ErrNoWindow, p.cfg.Model)
}

// ListModels lists the server's models: GET {root}/v1/models.
func (p *Anthropic) ListModels(ctx context.Context) ([]string, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, p.root+"/v1/models?limit=1000", nil)
	if err != nil {
		return nil, err
	}
	p.setHeaders(hr.Header)
	resp, err := p.cfg.HTTPClient.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("list the models: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list the models: GET /v1/models: %s", resp.Status)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxProbeBody)).Decode(&list); err != nil {
		return nil, fmt.Errorf("list the models: %w", err)
	}
	var ids []string
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil, errors.New("list the models: the server lists none")
	}
	return sortedUnique(ids), nil
}

package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// setThinking turns thinking on when an effort other than "none" is
// configured: adaptive thinking with output_config.effort for Claude 4.6
// and later (which take an effort), a budget of thinking tokens for the
// older models, within max_tokens. Thinking is shown summarised.
func (p *Anthropic) setThinking(model, e string, params *anthropic.MessageNewParams) {
	if e == "" || e == "none" {
		return
	}
	if takesEffort(model) {
		if e == "minimal" {
			e = "low"
		}
		params.Thinking.OfAdaptive = &anthropic.ThinkingConfigAdaptiveParam{Display: anthropic.ThinkingConfigAdaptiveDisplaySummarized}
		params.OutputConfig.Effort = anthropic.OutputConfigEffort(e)
		return
	}
	setBudget(e, params)
}

// setBudget turns thinking on with a budget for effort e, within
// max_tokens.
func setBudget(e string, params *anthropic.MessageNewParams) {
	budget := map[string]int64{"minimal": 1024, "low": 2048, "medium": 4096, "high": 8192, "xhigh": 16384, "max": 32768}[e]
	if budget > params.MaxTokens-1024 {
		budget = params.MaxTokens - 1024
	}
	if budget < 1024 {
		return // the API's minimum budget does not fit max_tokens
	}
	params.Thinking.OfEnabled = &anthropic.ThinkingConfigEnabledParam{BudgetTokens: budget}
}

var claudeVersion = regexp.MustCompile(`claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d))?(?:$|[^0-9])`)

// takesEffort reports whether a Claude model takes an effort (adaptive
// thinking): version 4.6 and later.
func takesEffort(model string) bool {
	m := claudeVersion.FindStringSubmatch(model)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major > 4 || (major == 4 && minor >= 6)
}

// readCapped reads an error body, at most 64 KiB of it.
func readCapped(r io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, 64<<10))
}

// antEvent is the part of a Messages stream event the provider reads.
type antEvent struct {
	Type         string          `json:"type"`
	Index        int             `json:"index"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Message *struct {
		Usage *antUsage `json:"usage"`
	} `json:"message"`
	Usage *antUsage `json:"usage"`
}

// antUsage is Anthropic's usage: input_tokens counts only the tokens
// after the last cache breakpoint; the prompt is all three input counts.
type antUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
}

// merge takes the counts v reports (message_delta repeats or updates
// those of message_start).
func (u *antUsage) merge(v *antUsage) {
	if v == nil {
		return
	}
	for _, f := range []struct{ dst, src **int64 }{
		{&u.InputTokens, &v.InputTokens}, {&u.CacheCreationInputTokens, &v.CacheCreationInputTokens},
		{&u.CacheReadInputTokens, &v.CacheReadInputTokens}, {&u.OutputTokens, &v.OutputTokens},
	} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
}

func (u *antUsage) usage() fsm.Usage {
	n := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	prompt := n(u.InputTokens) + n(u.CacheCreationInputTokens) + n(u.CacheReadInputTokens)
	out := fsm.Usage{PromptTokens: prompt, CompletionTokens: n(u.OutputTokens)}
	out.TotalTokens = out.PromptTokens + out.CompletionTokens
	if u.CacheReadInputTokens != nil {
		c := *u.CacheReadInputTokens
		out.CachedTokens = &c
	}
	return out
}

// antBlock is one content block being streamed.
type antBlock struct {
	kind      string // text, thinking, redacted_thinking, tool_use
	thinking  bytes.Buffer
	signature string
	data      string // redacted_thinking's
	call      int    // tool_use: position in calls
}

// antDecoder is the state of one Messages stream.
type antDecoder struct {
	reqID    uint64
	blocks   map[int]*antBlock
	order    []int // block indexes in arrival order
	calls    []fsm.ToolCall
	args     []bytes.Buffer
	usage    antUsage
	stop     string
	answered int
}

// decode reads a Messages event stream, emitting deltas as they come and
// one final event.
func (p *Anthropic) decode(ctx, sctx context.Context, reqID uint64, body io.Reader, emit func(fsm.Event), finish func(fsm.Event)) {
	st := antDecoder{reqID: reqID, blocks: map[int]*antBlock{}}
	d := dialects["anthropic"]
	decodeEvents(ctx, sctx, reqID, body, d, p.cfg.IdleTimeout, "message_stop", finish, func(ev *antEvent, data []byte) (fsm.Event, bool) {
		switch ev.Type {
		case "error":
			return streamErrorEvent(d, reqID, data), true
		case "message_stop":
			return st.completed(), true
		}
		return st.event(ev, p.cfg.MaxAnswerBytes, emit)
	})
}

// event handles one event; it returns an error event when the answer
// passed maxBytes.
func (st *antDecoder) event(ev *antEvent, maxBytes int, emit func(fsm.Event)) (fsm.Event, bool) {
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			st.usage.merge(ev.Message.Usage)
		}
	case "content_block_start":
		st.blockStart(ev, emit)
	case "content_block_delta":
		return st.blockDelta(ev, maxBytes, emit)
	case "message_delta":
		st.usage.merge(ev.Usage)
		if ev.Delta.StopReason != "" {
			st.stop = ev.Delta.StopReason
		}
	}
	return nil, false
}

// blockStart opens a content block: a tool call starts, a text's first
// words go out, a thinking block starts collecting.
func (st *antDecoder) blockStart(ev *antEvent, emit func(fsm.Event)) {
	var cb struct {
		Type     string          `json:"type"`
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Text     string          `json:"text"`
		Thinking string          `json:"thinking"`
		Data     string          `json:"data"`
		Input    json.RawMessage `json:"input"`
	}
	json.Unmarshal(ev.ContentBlock, &cb)
	b := &antBlock{kind: cb.Type, data: cb.Data}
	st.blocks[ev.Index] = b
	st.order = append(st.order, ev.Index)
	switch cb.Type {
	case "tool_use":
		b.call = len(st.calls)
		st.calls = append(st.calls, fsm.ToolCall{ID: cb.ID, Name: cb.Name})
		st.args = append(st.args, bytes.Buffer{})
		emit(fsm.LlmToolCallDelta{Request: st.reqID, Index: b.call, ID: cb.ID, Name: cb.Name})
	case "text":
		if cb.Text != "" {
			emit(fsm.LlmTextDelta{Request: st.reqID, Text: cb.Text})
		}
	case "thinking":
		b.thinking.WriteString(cb.Thinking)
	}
}

// blockDelta adds to an open block (a delta of no open block is
// dropped); it returns an error event when the answer passed maxBytes.
func (st *antDecoder) blockDelta(ev *antEvent, maxBytes int, emit func(fsm.Event)) (fsm.Event, bool) {
	b := st.blocks[ev.Index]
	if b == nil {
		return nil, false
	}
	dl := &ev.Delta
	st.answered += len(dl.Text) + len(dl.Thinking)
	if st.answered > maxBytes {
		return fsm.LlmError{Request: st.reqID, Kind: fsm.ErrorStream,
			Message: fmt.Sprintf("the answer passed %s (model.max_answer_bytes): the stream was cut; ask for less at once, or raise the limit", byteSize(maxBytes))}, true
	}
	switch dl.Type {
	case "text_delta":
		emit(fsm.LlmTextDelta{Request: st.reqID, Text: dl.Text})
	case "thinking_delta":
		b.thinking.WriteString(dl.Thinking)
		emit(fsm.LlmReasoningDelta{Request: st.reqID, Text: dl.Thinking})
	case "signature_delta":
		b.signature += dl.Signature
	case "input_json_delta":
		if b.kind == "tool_use" {
			st.args[b.call].WriteString(dl.PartialJSON)
			emit(fsm.LlmToolCallDelta{Request: st.reqID, Index: b.call, ArgumentsDelta: dl.PartialJSON})
		}
	}
	return nil, false
}

// completed builds the LlmCompleted of message_stop: the calls, the usage,
// and the thinking blocks to send back.
func (st *antDecoder) completed() fsm.LlmCompleted {
	done := fsm.LlmCompleted{Request: st.reqID, Usage: st.usage.usage()}
	switch st.stop {
	case "tool_use":
		done.FinishReason = "tool_calls"
	case "max_tokens":
		done.FinishReason = "length"
	case "end_turn", "stop_sequence", "":
		done.FinishReason = "stop"
	default:
		done.FinishReason = st.stop
	}
	var kept [][]byte
	for _, i := range st.order {
		b := st.blocks[i]
		var raw []byte
		switch b.kind {
		case "thinking":
			raw, _ = marshalNoEscape(struct {
				Type      string `json:"type"`
				Thinking  string `json:"thinking"`
				Signature string `json:"signature"`
			}{"thinking", b.thinking.String(), b.signature})
		case "redacted_thinking":
			raw, _ = marshalNoEscape(struct {
				Type string `json:"type"`
				Data string `json:"data"`
			}{"redacted_thinking", b.data})
		}
		if raw != nil {
			kept = append(kept, raw)
		}
	}
	if len(kept) > 0 {
		done.Opaque = fsm.Opaque{API: opaqueMessages, Data: "[" + string(bytes.Join(kept, []byte{','})) + "]"}
	}
	for i := range st.calls {
		c := st.calls[i]
		c.Arguments = st.args[i].String()
		if c.Arguments == "" {
			c.Arguments = "{}"
		}
		done.ToolCalls = append(done.ToolCalls, c)
	}
	return done
}

// marshalNoEscape encodes v without escaping '<', '>' and '&'.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// The request body is built by concatenation (issue 16 item 4): the
// conversation is append-only, so each message's JSON is encoded once,
// kept, and spliced into the body of every later request. A request then
// costs the encoding of its new messages plus a copy of the rest, instead
// of re-encoding the whole history.
//
// The bytes are exactly those of openai-go's own encoder (each message is
// encoded by it, and openai-go writes "messages" first), which
// TestRequestBodyMatchesUncachedEncoder checks over random conversations
// with elision and compaction.

// bodyPrefix opens the body: openai-go writes the messages first.
const bodyPrefix = `{"messages":[`

// streamField is what option.WithJSONSet("stream", true) appends.
const streamField = `,"stream":true}`

// messageCache holds the encodings of the last request's messages, by
// index. An entry is reused only when the new request's message at that
// index is equal to the one it encoded: field by field, so any change —
// an elided tool result, a compacted history, another conversation —
// re-encodes exactly the messages that differ. The comparison is cheap for
// the common case, the same strings shared by both requests, since
// comparing a string with itself does not read its bytes.
type messageCache struct {
	mu sync.Mutex
	// msgs[i] is the message enc[i] encodes; holding it keeps its strings
	// alive, so the comparison above stays a pointer check.
	msgs []fsm.Message
	enc  [][]byte
	// echoes[i] is what enc[i] echoes back (see echo).
	echoes []echo
}

// requestBody returns the JSON body of req, with "stream": true.
func (p *OpenAI) requestBody(d *Dialect, req Request) ([]byte, error) {
	params, err := p.buildParams(d, Request{Tools: req.Tools, Model: req.Model, ReasoningEffort: req.ReasoningEffort, CacheKey: req.CacheKey})
	if err != nil {
		return nil, err
	}
	params.Messages = nil // omitted: they go first, from the cache
	envelope, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	if p.cfg.EncodeEveryMessage || !p.cache.mu.TryLock() {
		// Another request of this provider is being built (a provider
		// shared by sessions): build this one without the cache.
		var c messageCache
		return c.body(d, req, envelope)
	}
	defer p.cache.mu.Unlock()
	return p.cache.body(d, req, envelope)
}

// body encodes the messages not cached and concatenates the body:
// {"messages":[…], then the envelope's other fields, then "stream": true.
// The caller holds c.mu.
func (c *messageCache) body(d *Dialect, req Request, envelope []byte) ([]byte, error) {
	msgs := req.Messages
	if len(envelope) < 2 || envelope[0] != '{' || envelope[len(envelope)-1] != '}' {
		return nil, fmt.Errorf("unexpected request envelope %.40q", envelope)
	}
	size := len(bodyPrefix) + len(msgs) + len(envelope) + len(streamField)
	for i := range msgs {
		if i >= len(c.msgs) {
			c.msgs = append(c.msgs, fsm.Message{})
			c.enc = append(c.enc, nil)
			c.echoes = append(c.echoes, echo{})
		}
		e := d.echo(i >= req.TurnStart)
		if c.enc[i] == nil || c.echoes[i] != e || !sameMessage(&msgs[i], &c.msgs[i]) {
			enc, err := encodeMessage(msgs[i], e, req.Images)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			c.msgs[i], c.enc[i], c.echoes[i] = msgs[i], enc, e
		}
		size += len(c.enc[i])
	}
	// Forget what a longer earlier request held beyond this one.
	clear(c.msgs[len(msgs):])
	clear(c.enc[len(msgs):])
	c.msgs, c.enc, c.echoes = c.msgs[:len(msgs)], c.enc[:len(msgs)], c.echoes[:len(msgs)]

	body := make([]byte, 0, size)
	body = append(body, bodyPrefix...)
	for i, enc := range c.enc {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, enc...)
	}
	body = append(body, ']')
	if rest := envelope[1 : len(envelope)-1]; len(bytes.TrimSpace(rest)) > 0 {
		body = append(body, ',')
		body = append(body, rest...)
	}
	body = append(body, streamField...)
	return body, nil
}

// encodeMessage is one message as openai-go encodes it in a request.
func encodeMessage(m fsm.Message, e echo, images ImageSource) ([]byte, error) {
	w, err := wireMessage(m, e, images)
	if err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// sameMessage reports whether a and b encode alike (Note, which is not
// encoded, is compared too: a note and a prompt of the same text are never
// taken for each other).
func sameMessage(a, b *fsm.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID || a.Reasoning != b.Reasoning || a.Note != b.Note || a.Opaque != b.Opaque || len(a.ToolCalls) != len(b.ToolCalls) || !slices.Equal(a.Images, b.Images) {
		return false
	}
	for i := range a.ToolCalls {
		if a.ToolCalls[i] != b.ToolCalls[i] {
			return false
		}
	}
	return true
}

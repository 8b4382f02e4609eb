package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
)

// What Anthropic's API says of a model before the first request: GET
// /v1/models/{model_id} answers anthropic.ModelInfo with max_input_tokens
// (the context window), and capabilities — which thinking types
// (adaptive, or a budget) and which effort levels the model takes, and
// whether it takes pictures. The provider asks once per model and keeps
// the answer; a server that does not answer it (Ollama, llama.cpp and LM
// Studio serve /v1/messages, not this), or answers without capabilities,
// leaves the rules by model name in force.

// modelInfoTimeout bounds the question, so that a server that never
// answers it delays the first request by no more.
const modelInfoTimeout = 10 * time.Second

// antModelInfo is the answer for one model, once asked.
type antModelInfo struct {
	mu   sync.Mutex           // held while asking
	info *anthropic.ModelInfo // nil: the server did not tell
	done atomic.Bool          // info is the answer (a question cut short by its caller is asked again)
}

// modelInfo returns what the server says of model, asking it the first
// time; nil when it says nothing usable.
func (p *Anthropic) modelInfo(ctx context.Context, model string) *anthropic.ModelInfo {
	p.mu.Lock()
	if p.infos == nil {
		p.infos = make(map[string]*antModelInfo)
	}
	e := p.infos[model]
	if e == nil {
		e = &antModelInfo{}
		p.infos[model] = e
	}
	p.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.done.Load() {
		info := p.fetchModelInfo(ctx, model)
		if ctx.Err() != nil {
			return nil // cancelled: not an answer to keep
		}
		e.info = info
		e.done.Store(true)
	}
	return e.info
}

// fetchModelInfo asks GET /v1/models/{model}.
func (p *Anthropic) fetchModelInfo(ctx context.Context, model string) *anthropic.ModelInfo {
	ctx, cancel := context.WithTimeout(ctx, modelInfoTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, p.root+"/v1/models/"+url.PathEscape(model), nil)
	if err != nil {
		return nil
	}
	p.setHeaders(hr.Header)
	resp, err := p.cfg.HTTPClient.Do(hr)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
	if err != nil {
		return nil
	}
	var info anthropic.ModelInfo
	if err := json.Unmarshal(b, &info); err != nil || !info.JSON.Capabilities.Valid() && info.MaxInputTokens <= 0 {
		return nil
	}
	return &info
}

// thinkingFromInfo sets thinking as the model's capabilities say; ok is
// false when they say nothing (the name rules apply). Adaptive thinking
// with the effort when the model takes it (the effort lowered to the
// nearest level it takes: Sonnet 4.6 refuses "max"), else a budget, else
// none.
func thinkingFromInfo(info *anthropic.ModelInfo, effort string, params *anthropic.MessageNewParams) (ok bool) {
	if effort == "" || effort == "none" {
		return true // no thinking
	}
	if info == nil || !info.JSON.Capabilities.Valid() {
		return false
	}
	c := info.Capabilities
	switch {
	case !c.Thinking.Supported:
	case c.Thinking.Types.Adaptive.Supported:
		params.Thinking.OfAdaptive = &anthropic.ThinkingConfigAdaptiveParam{Display: anthropic.ThinkingConfigAdaptiveDisplaySummarized}
		if e := supportedEffort(c.Effort, effort); e != "" {
			params.OutputConfig.Effort = anthropic.OutputConfigEffort(e)
		}
	case c.Thinking.Types.Enabled.Supported:
		setBudget(effort, params)
	}
	return true
}

// supportedEffort is effort, or the nearest lower level the model takes
// ("minimal" is "low"); "" when it takes none.
func supportedEffort(c anthropic.EffortCapability, effort string) string {
	if !c.Supported {
		return ""
	}
	levels := []struct {
		name string
		ok   bool
	}{{"low", c.Low.Supported}, {"medium", c.Medium.Supported}, {"high", c.High.Supported}, {"xhigh", c.Xhigh.Supported}, {"max", c.Max.Supported}}
	want := 0
	for i, l := range levels {
		if l.name == effort {
			want = i
		}
	}
	for i := want; i >= 0; i-- {
		if levels[i].ok {
			return levels[i].name
		}
	}
	for _, l := range levels {
		if l.ok {
			return l.name
		}
	}
	return ""
}

// windowFromInfo is the window max_input_tokens says.
func windowFromInfo(info *anthropic.ModelInfo, model string) (Window, bool) {
	if info == nil || info.MaxInputTokens <= 0 {
		return Window{}, false
	}
	return Window{Tokens: int(info.MaxInputTokens), Source: fmt.Sprintf("the server's model listing of %s (max_input_tokens)", model)}, true
}

// ImagesSaid reports whether the server said model takes pictures
// (capabilities.image_input), from what it already answered (it never
// asks: the window probe usually has); known is false when it did not
// say, or was not asked yet.
func (p *Anthropic) ImagesSaid(model string) (accepts, known bool) {
	p.mu.Lock()
	e := p.infos[model]
	p.mu.Unlock()
	if e == nil || !e.done.Load() {
		return false, false
	}
	e.mu.Lock()
	info := e.info
	e.mu.Unlock()
	if info == nil || !info.JSON.Capabilities.Valid() {
		return false, false
	}
	return info.Capabilities.ImageInput.Supported, true
}

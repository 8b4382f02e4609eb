package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Window is a model's context window in tokens, and where it was learned.
type Window struct {
	// Tokens is the window; positive.
	Tokens int
	// Source says where Tokens comes from, for loom.status, e.g.
	// "server: vLLM /v1/models max_model_len".
	Source string
}

// WindowProber is a [Provider] that can ask its server for the model's
// context window.
type WindowProber interface {
	// ContextWindow asks the server once. It returns ErrNoWindow when the
	// server does not say; ctx bounds how long it may take.
	ContextWindow(ctx context.Context) (Window, error)
}

// ErrNoWindow is wrapped by ContextWindow's error when the server does not
// tell the model's context window.
var ErrNoWindow = errors.New("the server does not tell the model's context window")

// maxProbeBody caps what is read of one probe answer (a /v1/models list
// of a server with many models is large).
const maxProbeBody = 8 << 20

// ContextWindow asks the server for the context window of the configured
// model, asking at once (concurrently; the first in this order that tells
// wins) what each OpenAI-compatible server answers:
//   - GET {base_url}/models: vLLM's max_model_len (OpenRouter's
//     context_length) of the model's entry;
//   - GET {root}/api/v0/models, root being base_url without "/v1": LM
//     Studio's loaded_context_length (else max_context_length);
//   - GET {root}/props: llama.cpp's
//     default_generation_settings.n_ctx, the window of one slot;
//   - POST {root}/api/show: Ollama's num_ctx parameter when the model sets
//     one, else the model's "<architecture>.context_length".
//
// OpenAI's own API (api.openai.com) tells none of these: there the
// window comes from a small table of known models, without a request.
// Every request carries the configured key and headers. A path the server
// answered 404 is not asked again (see [ProbeMemory]).
func (p *OpenAI) ContextWindow(ctx context.Context) (Window, error) {
	base := strings.TrimRight(p.cfg.BaseURL, "/")
	if u, err := url.Parse(base); err == nil && u.Hostname() == "api.openai.com" {
		if n, ok := KnownContextWindow(p.cfg.Model); ok {
			return Window{Tokens: n, Source: "known window of " + p.cfg.Model}, nil
		}
		return Window{}, fmt.Errorf("%w: %s is not in the table of known OpenAI models", ErrNoWindow, p.cfg.Model)
	}
	root := strings.TrimSuffix(base, "/v1")
	var probes []func(context.Context) (Window, error)
	for _, probe := range []func(context.Context, string, string) (Window, error){p.probeModels, p.probeLMStudio, p.probeLlamaCpp, p.probeOllama} {
		probes = append(probes, func(ctx context.Context) (Window, error) { return probe(ctx, base, root) })
	}
	w, errs := firstWindow(ctx, probes)
	if errs == nil {
		return w, nil
	}
	if ctx.Err() != nil {
		return Window{}, fmt.Errorf("%w: no answer in time (%w)", ErrNoWindow, ctx.Err())
	}
	tried := make([]string, len(errs))
	for i, err := range errs {
		tried[i] = err.Error()
	}
	return Window{}, fmt.Errorf("%w: %s", ErrNoWindow, strings.Join(tried, "; "))
}

// probeModels reads the model's entry of GET {base}/models.
func (p *OpenAI) probeModels(ctx context.Context, base, _ string) (Window, error) {
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			OwnedBy       string `json:"owned_by"`
			MaxModelLen   int    `json:"max_model_len"`  // vLLM
			ContextLength int    `json:"context_length"` // OpenRouter
			Architecture  struct {
				InputModalities []string `json:"input_modalities"` // OpenRouter
			} `json:"architecture"`
		} `json:"data"`
	}
	if err := p.probeJSON(ctx, http.MethodGet, base+"/models", nil, &list); err != nil {
		return Window{}, err
	}
	owners := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		owners = append(owners, m.OwnedBy)
	}
	p.noteOwners(owners)
	for _, m := range list.Data {
		if m.ID != p.cfg.Model && len(list.Data) > 1 {
			continue
		}
		if in := m.Architecture.InputModalities; len(in) > 0 && m.ID == p.cfg.Model {
			p.noteImages(slices.Contains(in, "image"))
		}
		switch {
		case m.MaxModelLen > 0:
			return Window{Tokens: m.MaxModelLen, Source: "server: /v1/models max_model_len (vLLM)"}, nil
		case m.ContextLength > 0:
			return Window{Tokens: m.ContextLength, Source: "server: /v1/models context_length"}, nil
		}
	}
	return Window{}, errors.New("/models: no max_model_len for " + p.cfg.Model)
}

// lmstudioModel is one entry of LM Studio's GET {root}/api/v0/models.
type lmstudioModel struct {
	ID               string `json:"id"`
	State            string `json:"state"` // "loaded", "not-loaded"
	MaxContextLength int    `json:"max_context_length"`
	// Type is "llm", "vlm" (takes pictures) or "embeddings".
	Type                string `json:"type"`
	LoadedContextLength int    `json:"loaded_context_length"`
}

// lmstudioEntry reads LM Studio's own models list and returns the
// configured model's entry.
func (p *OpenAI) lmstudioEntry(ctx context.Context, root string) (lmstudioModel, error) {
	var list struct {
		Data []lmstudioModel `json:"data"`
	}
	if err := p.probeJSON(ctx, http.MethodGet, root+"/api/v0/models", nil, &list); err != nil {
		return lmstudioModel{}, err
	}
	for _, m := range list.Data {
		if m.ID == p.cfg.Model {
			return m, nil
		}
	}
	return lmstudioModel{}, errors.New("/api/v0/models: no entry for " + p.cfg.Model)
}

// probeLMStudio reads LM Studio's GET {root}/api/v0/models: the context
// the loaded model runs with (loaded_context_length: LM Studio loads a
// model with 4,096 tokens unless told otherwise, and overflows it
// silently), else the model's max_context_length.
func (p *OpenAI) probeLMStudio(ctx context.Context, _, root string) (Window, error) {
	m, err := p.lmstudioEntry(ctx, root)
	if err != nil {
		return Window{}, err
	}
	p.noteOwners([]string{"organization_owner"})
	if m.Type == "vlm" || m.Type == "llm" {
		p.noteImages(m.Type == "vlm")
	}
	switch {
	case m.LoadedContextLength > 0:
		return Window{Tokens: m.LoadedContextLength, Source: "server: /api/v0/models loaded_context_length (LM Studio)"}, nil
	case m.MaxContextLength > 0:
		return Window{Tokens: m.MaxContextLength, Source: "server: /api/v0/models max_context_length (LM Studio)"}, nil
	}
	return Window{}, errors.New("/api/v0/models: no context length for " + p.cfg.Model)
}

// probeLlamaCpp reads llama.cpp's GET {root}/props.
func (p *OpenAI) probeLlamaCpp(ctx context.Context, _, root string) (Window, error) {
	var props struct {
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if err := p.probeJSON(ctx, http.MethodGet, root+"/props", nil, &props); err != nil {
		return Window{}, err
	}
	if props.Settings.NCtx <= 0 {
		return Window{}, errors.New("/props: no default_generation_settings.n_ctx")
	}
	return Window{Tokens: props.Settings.NCtx, Source: "server: /props n_ctx (llama.cpp)"}, nil
}

// probeOllama reads Ollama's POST {root}/api/show.
func (p *OpenAI) probeOllama(ctx context.Context, _, root string) (Window, error) {
	var show struct {
		Parameters   string                     `json:"parameters"`
		ModelInfo    map[string]json.RawMessage `json:"model_info"`
		Capabilities []string                   `json:"capabilities"` // "vision": takes pictures
	}
	body, _ := json.Marshal(map[string]string{"model": p.cfg.Model})
	if err := p.probeJSON(ctx, http.MethodPost, root+"/api/show", body, &show); err != nil {
		return Window{}, err
	}
	if len(show.Capabilities) > 0 {
		p.noteImages(slices.Contains(show.Capabilities, "vision"))
	}
	// parameters is the Modelfile's PARAMETER lines: "num_ctx 8192\n…".
	sc := bufio.NewScanner(strings.NewReader(show.Parameters))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "num_ctx" {
			if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
				return Window{Tokens: n, Source: "server: /api/show num_ctx (Ollama)"}, nil
			}
		}
	}
	var arch string
	if raw, ok := show.ModelInfo["general.architecture"]; ok {
		json.Unmarshal(raw, &arch)
	}
	key := arch + ".context_length"
	var n int
	if raw, ok := show.ModelInfo[key]; ok && json.Unmarshal(raw, &n) == nil && n > 0 {
		return Window{Tokens: n, Source: "server: /api/show " + key + " (Ollama)"}, nil
	}
	return Window{}, errors.New("/api/show: no num_ctx nor context_length")
}

// probeJSON sends one probe request and decodes its JSON answer into v.
func (p *OpenAI) probeJSON(ctx context.Context, method, url string, body []byte, v any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, val := range p.cfg.Headers {
		req.Header.Set(k, val)
	}
	if p.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	if p.probes.isMissing(req.URL.Path) {
		return fmt.Errorf("%s %s: %w (answered 404 before)", method, req.URL.Path, errProbeMissing)
	}
	resp, err := p.httpClient().Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		if missingStatus(resp.StatusCode) {
			p.probes.markMissing(req.URL.Path)
			return fmt.Errorf("%s %s: %s: %w", method, req.URL.Path, resp.Status, errProbeMissing)
		}
		return fmt.Errorf("%s %s: %s", method, req.URL.Path, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxProbeBody)).Decode(v); err != nil {
		return fmt.Errorf("%s %s: %w", method, req.URL.Path, err)
	}
	return nil
}

func (p *OpenAI) httpClient() *http.Client {
	if p.cfg.HTTPClient != nil {
		return p.cfg.HTTPClient
	}
	return http.DefaultClient
}

// RunningWindowProber is a [Provider] whose server may run the model with
// a smaller window than the one it was trained with, and can tell the
// running one once the model is loaded (Ollama).
type RunningWindowProber interface {
	// RunningWindow asks the server for the window the model runs with
	// now. It returns ErrNoWindow when the server does not say, or the
	// model is not loaded.
	RunningWindow(ctx context.Context) (Window, error)
}

// RunningWindow reads Ollama's GET {root}/api/ps: the context_length the
// loaded model runs with (num_ctx: 4096 by default on small GPUs, whatever
// the model was trained with), or LM Studio's loaded_context_length.
// Other dialects return ErrNoWindow.
func (p *OpenAI) RunningWindow(ctx context.Context) (Window, error) {
	if !p.Dialect().RunningWindow {
		return Window{}, fmt.Errorf("%w: the %s server runs models with their whole window", ErrNoWindow, p.Dialect().Name)
	}
	root := strings.TrimSuffix(strings.TrimRight(p.cfg.BaseURL, "/"), "/v1")
	if p.Dialect().Name == "lmstudio" {
		m, err := p.lmstudioEntry(ctx, root)
		if err != nil {
			return Window{}, fmt.Errorf("%w: %w", ErrNoWindow, err)
		}
		if m.LoadedContextLength <= 0 {
			return Window{}, fmt.Errorf("%w: /api/v0/models: %s is not loaded", ErrNoWindow, p.cfg.Model)
		}
		return Window{Tokens: m.LoadedContextLength, Source: "server: /api/v0/models loaded_context_length (LM Studio)"}, nil
	}
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if err := p.probeJSON(ctx, http.MethodGet, root+"/api/ps", nil, &ps); err != nil {
		return Window{}, fmt.Errorf("%w: %w", ErrNoWindow, err)
	}
	want := p.cfg.Model
	for _, m := range ps.Models {
		if (sameOllamaModel(m.Name, want) || sameOllamaModel(m.Model, want)) && m.ContextLength > 0 {
			return Window{Tokens: m.ContextLength, Source: "server: /api/ps context_length (Ollama's num_ctx)"}, nil
		}
	}
	return Window{}, fmt.Errorf("%w: /api/ps: %s is not loaded", ErrNoWindow, want)
}

// sameOllamaModel compares model names, "qwen3" being "qwen3:latest".
func sameOllamaModel(a, b string) bool {
	norm := func(s string) string {
		if !strings.Contains(s, ":") {
			s += ":latest"
		}
		return s
	}
	return a != "" && norm(a) == norm(b)
}

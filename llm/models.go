package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// ModelLister is a [Provider] that can list the models its server offers.
type ModelLister interface {
	// ListModels asks the server; ctx bounds how long it may take.
	ListModels(ctx context.Context) ([]string, error)
}

// ListModels lists the models of the server, sorted: GET {base_url}/models
// (OpenAI, vLLM, llama.cpp, LM Studio, OpenRouter, and Ollama's
// OpenAI-compatible API), else Ollama's own GET {root}/api/tags, root
// being base_url without "/v1". Every request carries the configured key
// and headers.
func (p *OpenAI) ListModels(ctx context.Context) ([]string, error) {
	base := strings.TrimRight(p.cfg.BaseURL, "/")
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	errModels := p.probeJSON(ctx, http.MethodGet, base+"/models", nil, &list)
	var ids []string
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	if errModels == nil && len(ids) > 0 {
		return sortedUnique(ids), nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("list the models: no answer in time (%w)", ctx.Err())
	}
	var tags struct {
		Models []struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	errTags := p.probeJSON(ctx, http.MethodGet, strings.TrimSuffix(base, "/v1")+"/api/tags", nil, &tags)
	for _, m := range tags.Models {
		if m.Name != "" {
			ids = append(ids, m.Name)
		} else if m.Model != "" {
			ids = append(ids, m.Model)
		}
	}
	if errTags == nil && len(ids) > 0 {
		return sortedUnique(ids), nil
	}
	if errModels == nil && errTags == nil {
		return nil, errors.New("list the models: the server lists none")
	}
	return nil, fmt.Errorf("list the models: %w", errors.Join(errModels, errTags))
}

func sortedUnique(ids []string) []string {
	sort.Strings(ids)
	out := ids[:0]
	for i, id := range ids {
		if i == 0 || id != ids[i-1] {
			out = append(out, id)
		}
	}
	return out
}

package workspace

import (
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/llm"
)

// loom.status names the wire API the model is spoken to with.
func TestStatusNamesTheWireAPI(t *testing.T) {
	for _, tc := range []struct {
		api, provider, want string
	}{
		{"", config.ProviderOpenAI, llm.APIChat},
		{llm.APIResponses, config.ProviderOpenAI, llm.APIResponses},
		{"", config.ProviderAnthropic, llm.APIMessages},
	} {
		p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: "http://127.0.0.1:1/v1", Model: "test-model", API: tc.api})
		if err != nil {
			t.Fatal(err)
		}
		h := newTestHost(t, p, func(c *config.Config) { c.Model.Provider = tc.provider; c.Model.API = tc.api })
		s, _ := h.AddFolder(t.TempDir())
		if got := statusOf(t, s).API; got != tc.want {
			t.Errorf("provider %q api %q: status api %q, want %q", tc.provider, tc.api, got, tc.want)
		}
	}
}

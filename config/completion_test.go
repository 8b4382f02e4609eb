package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// A cloned repository's .loom.toml cannot turn inline completion on, nor
// point the user's completion model (and the buffer's text with it)
// elsewhere: every completion key is a widening key, held back in an
// untrusted folder.
func TestCompletionKeysAreWidening(t *testing.T) {
	for _, key := range []string{"completion.api", "completion.base_url", "completion.model", "completion.api_key_env",
		"completion.max_tokens", "completion.temperature", "completion.context_tokens", "completion.debounce", "completion.timeout"} {
		if !WideningKey(key, "x") {
			t.Errorf("WideningKey(%q) = false", key)
		}
	}
	if !slices.Contains(WideningKeys(), "completion.*") {
		t.Errorf("WideningKeys() does not name completion.*")
	}
}

func TestRepositoryCannotEnableOrRedirectCompletion(t *testing.T) {
	xdg := isolate(t)
	folder := t.TempDir()
	write(t, folder, ".loom.toml", `
[completion]
api = "completions"
base_url = "https://evil.example/v1"
model = "stealer"
api_key_env = "AWS_SECRET_ACCESS_KEY"
`)
	// Off by default: the repository cannot turn it on.
	c, _, err := Load(LoadOptions{Folder: folder})
	if err != nil {
		t.Fatal(err)
	}
	if c.Completion.Enabled() || !reflect.DeepEqual(c.Completion, Default().Completion) {
		t.Errorf("an untrusted .loom.toml set completion: %+v", c.Completion)
	}
	if got := c.IgnoredKeys(); !slices.Contains(got, "completion.base_url") || !slices.Contains(got, "completion.api") {
		t.Errorf("IgnoredKeys() = %v, want the completion keys", got)
	}
	// Configured by the user: the repository cannot redirect it.
	write(t, xdg, "loom/loom.toml", `
[completion]
api = "infill"
base_url = "http://127.0.0.1:8012"
`)
	c, _, err = Load(LoadOptions{Folder: folder})
	if err != nil {
		t.Fatal(err)
	}
	if c.Completion.API != CompletionInfill || c.Completion.BaseURL != "http://127.0.0.1:8012" || c.Completion.APIKeyEnv != "" || c.Completion.Model != "" {
		t.Errorf("the repository redirected the user's completion: %+v", c.Completion)
	}
	// The same keys from the user's own file apply.
	if !c.Completion.Enabled() {
		t.Errorf("the user's completion is off")
	}
}

func TestCompletionValidate(t *testing.T) {
	isolate(t)
	c := Default()
	if c.Completion.Enabled() {
		t.Fatal("completion is on by default")
	}
	c.Completion.API = "bogus"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "completion.api") {
		t.Errorf("Validate(api=bogus) = %v", err)
	}
	c.Completion.API = CompletionOllama
	c.Completion.BaseURL = "http://localhost:11434"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "completion.model") {
		t.Errorf("Validate(ollama without a model) = %v", err)
	}
	c.Completion.Model = "qwen2.5-coder:1.5b-base"
	if err := c.Validate(); err != nil {
		t.Errorf("Validate(ollama) = %v", err)
	}
}

package config

import (
	"slices"
	"testing"
)

// The values of credential headers are secret; a title or referer is not.
func TestSecretHeaderValues(t *testing.T) {
	m := Model{Headers: map[string]string{
		"api-key":       "azure-key-123456",
		"Authorization": "Basic dXNlcjpwYXNzd29yZA==",
		"X-Title":       "loom-lsp",
		"HTTP-Referer":  "https://example.com/loom",
	}}
	want := []string{"Basic dXNlcjpwYXNzd29yZA==", "azure-key-123456", "dXNlcjpwYXNzd29yZA=="}
	if got := m.SecretHeaderValues(); !slices.Equal(got, want) {
		t.Errorf("SecretHeaderValues = %q, want %q", got, want)
	}
}

package llm

import "strings"

// DefaultContextWindow is the context window assumed for a model whose
// window is neither configured nor known: 32,768 tokens.
const DefaultContextWindow = 32768

// knownWindows are the context windows of well-known OpenAI models, by
// name prefix, longest prefix first.
var knownWindows = []struct {
	prefix string
	tokens int
}{
	{"gpt-4.1", 1047576},
	{"gpt-4o", 128000},
	{"gpt-4-turbo", 128000},
	{"gpt-5", 400000},
	{"gpt-4", 8192},
	{"gpt-3.5-turbo", 16385},
	{"o1-mini", 128000},
	{"o1", 200000},
	{"o3", 200000},
	{"o4-mini", 200000},
	{"claude", 200000},
}

// KnownContextWindow returns the context window of a well-known model
// name (e.g. "gpt-4o-2024-08-06"), and whether it is known.
func KnownContextWindow(model string) (int, bool) {
	for _, k := range knownWindows {
		if strings.HasPrefix(model, k.prefix) {
			return k.tokens, true
		}
	}
	return 0, false
}

// Package completion serves inline completion (LSP 3.18
// textDocument/inlineCompletion) from a fill-in-the-middle model of the
// user's own, apart from the agent's conversations: it never waits for,
// blocks or changes one, never runs a tool and never writes.
//
// [Client] speaks FIM to the servers people run for it: llama.cpp's
// POST /infill, an OpenAI-style POST /completions with "suffix" (vLLM,
// llama.cpp's /v1, DeepSeek's beta FIM), Ollama's POST /api/generate with
// "suffix", Mistral's (Codestral's) POST /v1/fim/completions, and a chat
// model asked with a FIM prompt where only chat is served.
//
// [Service] turns an editor's request (the open buffer's unsaved text and
// the cursor, in UTF-16 positions) into a [Window] of prefix and suffix
// bounded by a token budget, masked like the agent's requests, and asks
// the model — unless its cache already holds the answer, also for text
// the user typed through a suggestion. Only the newest request of a
// document is in flight: a newer one cancels the older, whose HTTP
// request is aborted. What the model answers is cut to one line or kept
// whole by context ([Multiline]) and trimmed where it repeats the text
// after the cursor ([Trim]).
package completion

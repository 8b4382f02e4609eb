// Package llm turns a model request into a stream of fsm LLM events.
//
// A [Provider] streams one response: [fsm.LlmTextDelta] and
// [fsm.LlmToolCallDelta] events as they arrive, then exactly one
// [fsm.LlmCompleted] (with the accumulated tool calls, usage and finish
// reason) or [fsm.LlmError]. Retrying is the state machine's job: a
// provider never retries, it classifies.
//
// The providers:
//
//   - [OpenAI] speaks the OpenAI Chat Completions streaming API, which
//     OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio and OpenRouter
//     all implement, and OpenAI's Responses API (responses.go), which
//     OpenAI's reasoning and Codex models need ([DefaultAPI]).
//   - [Anthropic] speaks Anthropic's Messages API (anthropic.go).
//   - [Script] replays a scripted model from a TOML file, for tests, the
//     offline demo and benchmarks. The format is described on [ParseScript]
//     and in testdata/README.md.
//
// What a server requires sent back with an answer (reasoning items,
// thinking blocks and their signatures, reasoning details) is kept as the
// assistant message's fsm.Opaque, which only the provider that wrote it
// reads.
package llm

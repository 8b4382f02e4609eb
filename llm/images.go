package llm

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// Pictures in prompts. A user message's fsm.Image references are
// resolved into bytes through Request.Images when the request is built:
// Chat Completions sends them as image_url content parts with a data URL
// (below). The other wire APIs (Responses' input_image, Anthropic's image
// blocks) read the same Request.Images hook.

// ImageSource returns the bytes of a picture the conversation references.
type ImageSource func(fsm.Image) ([]byte, error)

// imageModels are name fragments of model families that take pictures
// (lower case): OpenAI's GPT-4o/4.1/5 and o-series, Anthropic's Claude 3+,
// Google's Gemini and Gemma 3, and the open vision models Ollama and vLLM
// serve.
var imageModels = []string{
	"gpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-5", "o1", "o3", "o4", "chatgpt-4o",
	"claude-3", "claude-sonnet-4", "claude-opus-4", "claude-haiku-4", "claude-4",
	"gemini", "gemma3", "gemma-3",
	"vision", "-vl", "vl-", "llava", "bakllava", "pixtral", "minicpm-v", "moondream", "llama4", "llama-4", "qwen2.5vl", "qvq", "internvl", "mistral-small-3", "mistral-medium",
}

// AcceptsImages reports whether the model named model takes pictures,
// judged from its name (model.images = "auto").
func AcceptsImages(model string) bool {
	name := strings.ToLower(model)
	for _, f := range imageModels {
		if strings.Contains(name, f) {
			return true
		}
	}
	return false
}

// userMessage is a user message with its pictures: a text part, then one
// image_url part per picture.
func userMessage(m fsm.Message, images ImageSource) (openai.ChatCompletionMessageParamUnion, error) {
	if len(m.Images) == 0 {
		return openai.UserMessage(m.Content), nil
	}
	if images == nil {
		return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("the message has %d image(s) and the request no way to read them", len(m.Images))
	}
	parts := []openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(m.Content)}
	for _, img := range m.Images {
		b, err := images(img)
		if err != nil {
			return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("image %.12s: %w", img.Hash, err)
		}
		url := "data:" + img.MIME + ";base64," + base64.StdEncoding.EncodeToString(b)
		parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}))
	}
	return openai.UserMessage(parts), nil
}

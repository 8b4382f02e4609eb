package llm

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// Pictures in prompts. A user message's fsm.Image references are
// resolved into bytes through Request.Images when the request is built,
// and sent as each wire API spells a picture (below): Chat Completions an
// image_url content part with a data URL after the text, the Responses
// API an input_image with a data URL after the input_text, the Messages
// API an image block with a base64 source before the text (Anthropic's
// docs: images first works best). A picture that cannot be read fails
// the request before anything is sent.

// ImageSource returns the bytes of a picture the conversation references.
type ImageSource func(fsm.Image) ([]byte, error)

// imageModels are name fragments of model families that take pictures
// (lower case): OpenAI's GPT-4o/4.1/5.x (Codex and -pro included), Anthropic's
// Claude 3 and later, Google's Gemini and Gemma 3, and the open vision
// models Ollama and vLLM serve.
var imageModels = []string{
	"gpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-5", "chatgpt-4o", "codex-mini",
	"claude-3", "claude-sonnet-4", "claude-opus-4", "claude-haiku-4", "claude-4",
	"gemini", "gemma3", "gemma-3",
	"vision", "-vl", "vl-", "llava", "bakllava", "pixtral", "minicpm-v", "moondream", "llama4", "llama-4", "qwen2.5vl", "qvq", "internvl", "mistral-small-3", "mistral-medium",
}

// imageSeries are OpenAI's o-series that take pictures, matched at the
// start of the model's base name ("o3", "o4-mini", "openai/o3-pro"), so
// that no other name containing "o3" counts.
var imageSeries = []string{"o1", "o3", "o4"}

// textOnlyModels are the exceptions in those families that take text
// only, per OpenAI's model pages: o1-mini, o1-preview and o3-mini, and
// the audio and speech models.
var textOnlyModels = []string{"o1-mini", "o1-preview", "o3-mini", "-audio", "-tts", "-transcribe"}

// AcceptsImages reports whether the model named model takes pictures,
// judged from its name (model.images = "auto").
func AcceptsImages(model string) bool {
	name := strings.ToLower(model)
	for _, f := range textOnlyModels {
		if strings.Contains(name, f) {
			return false
		}
	}
	for _, f := range imageModels {
		if strings.Contains(name, f) {
			return true
		}
	}
	base := name[strings.LastIndex(name, "/")+1:]
	for _, f := range imageSeries {
		if rest, ok := strings.CutPrefix(base, f); ok && (rest == "" || rest[0] == '-') {
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
	parts := []openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(m.Content)}
	err := eachImage(m, images, func(img fsm.Image, b64 string) {
		url := dataURL(img, b64)
		parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}))
	})
	if err != nil {
		return openai.ChatCompletionMessageParamUnion{}, err
	}
	return openai.UserMessage(parts), nil
}

// responsesUserItem is a user message for the Responses API: plain text,
// or with pictures an input_text part then one input_image part (data
// URL, detail "auto": the API's default, named because its schema
// requires the field) per picture.
func responsesUserItem(m fsm.Message, images ImageSource) (responses.ResponseInputItemUnionParam, error) {
	if len(m.Images) == 0 {
		return responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleUser), nil
	}
	parts := responses.ResponseInputMessageContentListParam{responses.ResponseInputContentParamOfInputText(m.Content)}
	err := eachImage(m, images, func(img fsm.Image, b64 string) {
		part := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailAuto)
		part.OfInputImage.ImageURL = openai.String(dataURL(img, b64))
		parts = append(parts, part)
	})
	if err != nil {
		return responses.ResponseInputItemUnionParam{}, err
	}
	return responses.ResponseInputItemParamOfMessage(parts, responses.EasyInputMessageRoleUser), nil
}

// anthropicUserBlocks are a user message's blocks for the Messages API:
// one image block (base64 source with its media_type) per picture, then
// the text; empty text is left out (the API refuses empty text blocks).
func anthropicUserBlocks(m fsm.Message, images ImageSource) ([]anthropic.ContentBlockParamUnion, error) {
	var blocks []anthropic.ContentBlockParamUnion
	err := eachImage(m, images, func(img fsm.Image, b64 string) {
		blocks = append(blocks, anthropic.NewImageBlockBase64(img.MIME, b64))
	})
	if err != nil {
		return nil, err
	}
	if m.Content != "" {
		blocks = append(blocks, anthropic.NewTextBlock(m.Content))
	}
	return blocks, nil
}

// eachImage reads each picture of m through images and calls add with it
// base64-encoded, in order; the first that cannot be read is the error.
func eachImage(m fsm.Message, images ImageSource, add func(img fsm.Image, b64 string)) error {
	if len(m.Images) == 0 {
		return nil
	}
	if images == nil {
		return fmt.Errorf("the message has %d image(s) and the request no way to read them", len(m.Images))
	}
	for _, img := range m.Images {
		b, err := images(img)
		if err != nil {
			return fmt.Errorf("image %.12s: %w", img.Hash, err)
		}
		add(img, base64.StdEncoding.EncodeToString(b))
	}
	return nil
}

// dataURL is a picture as a data URL.
func dataURL(img fsm.Image, b64 string) string {
	return "data:" + img.MIME + ";base64," + b64
}

// noteImages records what the server's model listing said of the
// configured model's pictures (the window probes read it: OpenRouter's
// architecture.input_modalities, LM Studio's type "vlm", Ollama's
// capabilities "vision").
func (p *OpenAI) noteImages(takes bool) {
	p.dialect.mu.Lock()
	defer p.dialect.mu.Unlock()
	p.imagesSaid = &takes
}

// ImagesSaid reports whether the server's model listing said model takes
// pictures; known is false when it did not say (or was not asked yet:
// the window probe asks). It never asks.
func (p *OpenAI) ImagesSaid(model string) (accepts, known bool) {
	if model != p.cfg.Model {
		return false, false
	}
	p.dialect.mu.Lock()
	defer p.dialect.mu.Unlock()
	if p.imagesSaid == nil {
		return false, false
	}
	return *p.imagesSaid, true
}

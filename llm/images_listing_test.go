package llm

import (
	"context"
	"testing"
	"time"
)

// Listings' bytes for pictures: OpenRouter's GET /api/v1/models entries
// (architecture.input_modalities), LM Studio's GET /api/v0/models entry
// of a vision model (type "vlm"), Ollama's POST /api/show of one
// (capabilities "vision").
const (
	openRouterVision = `{"data":[{"id":"anthropic/claude-sonnet-4.5","canonical_slug":"anthropic/claude-4.5-sonnet-20250929","name":"Anthropic: Claude Sonnet 4.5","created":1759161676,"context_length":1000000,"architecture":{"modality":"text+image->text","input_modalities":["text","image","file"],"output_modalities":["text"],"tokenizer":"Claude","instruct_type":null},"pricing":{"prompt":"0.000003","completion":"0.000015"},"top_provider":{"context_length":1000000,"max_completion_tokens":64000,"is_moderated":true},"supported_parameters":["include_reasoning","max_tokens","reasoning","stop","temperature","tool_choice","tools","top_k","top_p"]},` +
		`{"id":"deepseek/deepseek-chat-v3.1","canonical_slug":"deepseek/deepseek-chat-v3.1","name":"DeepSeek: DeepSeek V3.1","created":1755779628,"context_length":163840,"architecture":{"modality":"text->text","input_modalities":["text"],"output_modalities":["text"],"tokenizer":"DeepSeek","instruct_type":"deepseek-v3.1"},"pricing":{"prompt":"0.0000002","completion":"0.0000008"},"top_provider":{"context_length":163840,"max_completion_tokens":null,"is_moderated":false},"supported_parameters":["include_reasoning","max_tokens","reasoning","tools"]}]}`
	lmstudioV0Vision = `{"data":[{"id":"qwen2.5-vl-7b-instruct","object":"model","type":"vlm","publisher":"lmstudio-community","arch":"qwen2vl","compatibility_type":"gguf","quantization":"Q4_K_M","state":"loaded","max_context_length":128000,"loaded_context_length":4096}],"object":"list"}`
	ollamaShowVision = `{"parameters":"stop                           \"<end_of_turn>\"","details":{"family":"gemma3"},"model_info":{"general.architecture":"gemma3","gemma3.context_length":131072},"capabilities":["completion","vision"]}`
)

// What a server's model listing says of pictures, read by the window
// probe without a request of its own: OpenRouter's input_modalities, LM
// Studio's type, Ollama's capabilities; a listing that says nothing
// (vLLM) leaves it unknown, and another model's answer is not this one's.
func TestImagesSaidByTheListing(t *testing.T) {
	for _, c := range []struct {
		name, model    string
		answers        map[string]string
		accepts, known bool
	}{
		{"OpenRouter vision", "anthropic/claude-sonnet-4.5", map[string]string{"GET /v1/models": openRouterVision}, true, true},
		{"OpenRouter text", "deepseek/deepseek-chat-v3.1", map[string]string{"GET /v1/models": openRouterVision}, false, true},
		{"LM Studio vlm", "qwen2.5-vl-7b-instruct", map[string]string{"GET /api/v0/models": lmstudioV0Vision}, true, true},
		{"LM Studio llm", "qwen3-8b", map[string]string{"GET /api/v0/models": lmstudioV0Loaded}, false, true},
		{"Ollama vision", "gemma3:4b", map[string]string{"POST /api/show": ollamaShowVision}, true, true},
		{"Ollama text", "qwen2.5-coder:7b", map[string]string{"POST /api/show": ollamaShow}, false, true},
		{"vLLM says nothing", "Qwen/Qwen2.5-Coder-32B-Instruct", map[string]string{"GET /v1/models": vllmModels}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newServerOfAnswers(t, c.answers)
			p, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", Model: c.model})
			if err != nil {
				t.Fatal(err)
			}
			if _, known := p.ImagesSaid(c.model); known {
				t.Fatal("known before anything was asked")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := p.ContextWindow(ctx); err != nil {
				t.Fatal(err)
			}
			if accepts, known := p.ImagesSaid(c.model); accepts != c.accepts || known != c.known {
				t.Errorf("ImagesSaid = %v, %v; want %v, %v", accepts, known, c.accepts, c.known)
			}
			if _, known := p.ImagesSaid("another-model"); known {
				t.Error("another model's pictures are said")
			}
		})
	}
}

package llm

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// errorBody is what an error response says, whatever its shape.
type errorBody struct {
	// msg is the human-readable text, capped; the raw body when it is
	// not JSON.
	msg string
	// code is the error's code or type ("context_length_exceeded", "429").
	code string
	// status is Google's status word ("RESOURCE_EXHAUSTED").
	status string
	// reason is a google.rpc.ErrorInfo reason ("API_KEY_INVALID").
	reason string
	// retryDelay is a google.rpc.RetryInfo retryDelay; zero when none.
	retryDelay time.Duration
}

// parseErrorBody reads an error body. It understands
// {"error":{"message","code","type"}} (OpenAI, vLLM, DeepSeek, Mistral's
// newer shape, Anthropic's {"type":"error","error":{…}}), {"error":"text"}
// (Ollama), a bare {"code","message","type"} (llama.cpp's in-stream
// errors), {"message"}, {"detail"} (Mistral's 422 validation errors,
// FastAPI), and Google's JSON array [{"error":{"code","message","status",
// "details":[…RetryInfo, ErrorInfo…]}}]. Anything else is kept as plain
// text, trimmed and capped.
func parseErrorBody(body []byte) errorBody {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(trimmed, &arr) == nil && len(arr) > 0 {
			trimmed = arr[0]
		}
	}
	var top struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
	}
	if json.Unmarshal(trimmed, &top) != nil {
		return errorBody{msg: capText(strings.TrimSpace(string(body)))}
	}
	var eb errorBody
	eb.code = rawScalar(top.Code)
	if eb.code == "" && top.Type != "error" {
		eb.code = top.Type
	}
	if len(top.Error) > 0 && string(top.Error) != "null" {
		eb.readErrorMember(top.Error)
		return eb
	}
	switch {
	case top.Message != "":
		eb.msg = capText(top.Message)
	case rawScalar(top.Detail) != "":
		eb.msg = capText(rawScalar(top.Detail))
	case len(top.Detail) > 0:
		eb.msg = capText(string(top.Detail))
	default:
		eb.msg = capText(strings.TrimSpace(string(body)))
	}
	return eb
}

// errorMember is the object of an error body's "error" member.
type errorMember struct {
	Message string          `json:"message"`
	Code    json.RawMessage `json:"code"`
	Type    string          `json:"type"`
	Status  string          `json:"status"`
	Details []struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"`
		Reason     string `json:"reason"`
	} `json:"details"`
	// Metadata is OpenRouter's: raw is the upstream provider's own
	// error (text, or its JSON body as a string), which its "Provider
	// returned error" hides.
	Metadata struct {
		Raw          json.RawMessage `json:"raw"`
		ProviderName string          `json:"provider_name"`
	} `json:"metadata"`
}

// readErrorMember reads an error body's "error" member: an object (its
// code, status, Google's retry delay and reason, its message with what
// OpenRouter's upstream said), or text (Ollama's).
func (eb *errorBody) readErrorMember(raw json.RawMessage) {
	var inner errorMember
	if json.Unmarshal(raw, &inner) == nil {
		eb.code = rawScalar(inner.Code)
		if eb.code == "" {
			eb.code = inner.Type
		}
		eb.status = inner.Status
		for _, d := range inner.Details {
			switch {
			case strings.HasSuffix(d.Type, "google.rpc.RetryInfo"):
				if dur, err := time.ParseDuration(d.RetryDelay); err == nil && dur > 0 {
					eb.retryDelay = dur
				}
			case strings.HasSuffix(d.Type, "google.rpc.ErrorInfo"):
				eb.reason = d.Reason
			}
		}
		if inner.Message != "" {
			eb.msg = capText(inner.Message + upstreamWords(inner.Metadata.Raw, inner.Metadata.ProviderName))
			return
		}
	}
	if s := rawScalar(raw); s != "" {
		eb.msg = capText(s)
		return
	}
	eb.msg = capText(string(raw))
}

// upstreamWords says what OpenRouter's metadata.raw holds, ": " and the
// upstream provider's own message (read from its error body when raw is
// one), "" when there is none.
func upstreamWords(raw json.RawMessage, provider string) string {
	text := rawScalar(raw)
	if text == "" && len(raw) > 0 && string(raw) != "null" {
		text = string(raw) // an object, not a string
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		if up := parseErrorBody([]byte(t)); up.msg != "" {
			text = up.msg
		}
	}
	if provider != "" {
		return " (" + provider + ": " + text + ")"
	}
	return " (upstream: " + text + ")"
}

// serverMessage returns an error body's text and code.
func serverMessage(body []byte) (msg, code string) {
	eb := parseErrorBody(body)
	return eb.msg, eb.code
}

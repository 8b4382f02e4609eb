package llmtest

import (
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/BurntSushi/toml"
)

// The dialect fixtures: one file per server family, holding the bytes that
// server sends (taken from its own source, tests or documentation, which
// each file cites) and what each of its errors means.
//
//go:embed testdata/dialects/*.toml
var dialectFiles embed.FS

// Fixture is one server family's recorded wire bytes.
type Fixture struct {
	// Name is the model.server value of the family.
	Name string `toml:"name"`
	// Source cites where the bytes come from.
	Source []string `toml:"source"`
	// Tools is the first answer of a turn: reasoning (when the server
	// streams it), text, two parallel tool calls — read_file a.txt and
	// list_files . — and usage, then [DONE].
	Tools string `toml:"tools"`
	// ToolsBare is a first answer with tool calls and no reasoning (DeepSeek
	// V4 in thinking mode returns such turns); "" when the fixture has none.
	ToolsBare string `toml:"tools_bare"`
	// EmptyOverflow is an HTTP 200 answer with no content to a prompt
	// past the loaded context (LM Studio's GGUF engine).
	EmptyOverflow string `toml:"empty_overflow"`
	// Answer is the answer once the tool results are in: text and usage.
	Answer string `toml:"answer"`
	// KeepAlive is Answer with the keep-alives the server (or a proxy in
	// front of it) sends while it works.
	KeepAlive string `toml:"keepalive"`
	// Expect is what Tools must decode to.
	Expect FixtureExpect `toml:"expect"`
	// Errors are the server's errors, with what they mean.
	Errors []FixtureError `toml:"error"`
	// Reject is the server's answer to a request its validation refuses
	// (Mistral: stream_options; DeepSeek: reasoning_content missing;
	// Gemini: thought signature missing); empty when it has none loom
	// could trip.
	Reject *FixtureError `toml:"reject"`
}

// FixtureExpect is what a Tools stream decodes to.
type FixtureExpect struct {
	Text      string   `toml:"text"`
	Reasoning string   `toml:"reasoning"`
	CallIDs   []string `toml:"call_ids"`
	// Signature is the thought signature of the first call (Gemini).
	Signature        string `toml:"signature"`
	Prompt           int64  `toml:"prompt_tokens"`
	Completion       int64  `toml:"completion_tokens"`
	AnswerText       string `toml:"answer_text"`
	AnswerPrompt     int64  `toml:"answer_prompt_tokens"`
	AnswerCompletion int64  `toml:"answer_completion_tokens"`
}

// FixtureError is one error as the server sends it, and its meaning.
type FixtureError struct {
	// Name says which error it is: auth, rate_limit, context, server,
	// midstream, midstream_context….
	Name string `toml:"name"`
	// Status and Body are an HTTP error response; Headers its headers.
	Status  int               `toml:"status"`
	Headers map[string]string `toml:"headers"`
	Body    string            `toml:"body"`
	// SSE, instead, is a 200 event stream that fails partway.
	SSE string `toml:"sse"`
	// Kind, Retryable and RetryAfter are what it must be classified as
	// (fsm.ErrorKind, and a Go duration or "").
	Kind       string `toml:"kind"`
	Retryable  bool   `toml:"retryable"`
	RetryAfter string `toml:"retry_after"`
	// Partial is the text the stream carried before failing.
	Partial string `toml:"partial"`
}

// Dialects returns the names of the recorded server families, sorted.
func Dialects() []string {
	entries, err := dialectFiles.ReadDir("testdata/dialects")
	if err != nil {
		panic(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".toml"))
	}
	sort.Strings(names)
	return names
}

// LoadFixture reads the fixture of a server family.
func LoadFixture(t testing.TB, name string) *Fixture {
	t.Helper()
	b, err := dialectFiles.ReadFile("testdata/dialects/" + name + ".toml")
	if err != nil {
		t.Fatalf("no fixture for %s: %v", name, err)
	}
	var f Fixture
	md, err := toml.Decode(string(b), &f)
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Fatalf("fixture %s: unknown keys %v", name, und)
	}
	if f.Name != name || len(f.Source) == 0 || f.Tools == "" || f.Answer == "" {
		t.Fatalf("fixture %s: name, source, tools and answer are required", name)
	}
	return &f
}

// Error returns the fixture's error of that name.
func (f *Fixture) Error(t testing.TB, name string) FixtureError {
	t.Helper()
	for _, e := range f.Errors {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("fixture %s has no error %q", f.Name, name)
	return FixtureError{}
}

// DialectServer replays one server family's recorded bytes, and refuses
// what that server's validation refuses.
type DialectServer struct {
	*httptest.Server
	// Fixture is the recorded server.
	Fixture *Fixture
	plan    func(n int, req Request) string

	mu   sync.Mutex
	reqs []Request
	// rejected counts the requests the validation refused.
	rejected int
}

// NewDialectServer starts a server replaying fixture name. plan picks, for
// the n-th request (from 0), what to answer: "tools", "answer",
// "keepalive", or the name of one of the fixture's errors.
func NewDialectServer(t testing.TB, name string, plan func(n int, req Request) string) *DialectServer {
	s := &DialectServer{Fixture: LoadFixture(t, name), plan: plan}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the URL to configure as model.base_url.
func (s *DialectServer) BaseURL() string { return s.URL + "/v1" }

// Requests returns the requests received so far, refused ones included.
func (s *DialectServer) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Rejected counts the requests the server's validation refused.
func (s *DialectServer) Rejected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rejected
}

func (s *DialectServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var wire struct {
		Model    string    `json:"model"`
		Messages []Message `json:"messages"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		http.Error(w, `{"error":{"message":"bad JSON"}}`, http.StatusBadRequest)
		return
	}
	req := Request{Body: body, Model: wire.Model, Messages: wire.Messages}
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if s.rejects(w, body) {
		return
	}
	step := s.plan(n, req)
	stream, ok := s.stepStream(step)
	if !ok {
		e := s.stepError(step)
		if e == nil {
			http.Error(w, fmt.Sprintf("llmtest: no step %q in fixture %s", step, s.Fixture.Name), http.StatusTeapot)
			return
		}
		if e.SSE == "" {
			for k, v := range e.Headers {
				w.Header().Set(k, v)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(e.Status)
			io.WriteString(w, e.Body)
			return
		}
		stream = e.SSE
	}
	if s.Fixture.Name == "llamacpp" {
		w.Header().Set("Server", "llama.cpp")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, stream)
}

// rejects answers with the fixture's Reject when the server family
// would refuse the body (and the fixture says how); it reports whether
// it did.
func (s *DialectServer) rejects(w http.ResponseWriter, body []byte) bool {
	problem := s.validate(body)
	if problem == "" || s.Fixture.Reject == nil {
		return false
	}
	s.mu.Lock()
	s.rejected++
	s.mu.Unlock()
	rej := s.Fixture.Reject
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Llmtest-Rejected", problem)
	w.WriteHeader(rej.Status)
	io.WriteString(w, rej.Body)
	return true
}

// stepStream is the fixture's stream of a named step; ok is false for
// any other step (an error's name).
func (s *DialectServer) stepStream(step string) (stream string, ok bool) {
	streams := map[string]string{
		"tools":          s.Fixture.Tools,
		"tools_bare":     s.Fixture.ToolsBare,
		"empty_overflow": s.Fixture.EmptyOverflow,
		"answer":         s.Fixture.Answer,
		"keepalive":      s.Fixture.KeepAlive,
	}
	stream, ok = streams[step]
	return stream, ok
}

// stepError is the fixture's error named step (the last of that name);
// nil when none.
func (s *DialectServer) stepError(step string) *FixtureError {
	var e *FixtureError
	for i := range s.Fixture.Errors {
		if s.Fixture.Errors[i].Name == step {
			e = &s.Fixture.Errors[i]
		}
	}
	return e
}

// validate returns why the server family would refuse the request body,
// "" when it accepts it.
func (s *DialectServer) validate(body []byte) string {
	var req sentRequest
	if json.Unmarshal(body, &req) != nil {
		return "bad JSON"
	}
	if refuses := familyRefusals[s.Fixture.Name]; refuses != nil {
		return refuses(req)
	}
	return ""
}

// sentRequest is what the families' validations read of a request.
type sentRequest struct {
	StreamOptions json.RawMessage `json:"stream_options"`
	Messages      []struct {
		Role             string  `json:"role"`
		ReasoningContent *string `json:"reasoning_content"`
		ToolCalls        []struct {
			ExtraContent *struct {
				Google struct {
					ThoughtSignature string `json:"thought_signature"`
				} `json:"google"`
			} `json:"extra_content"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

// familyRefusals say why a server family refuses a request, "" when it
// accepts it; a family not listed accepts every request.
var familyRefusals = map[string]func(req sentRequest) string{
	"mistral": func(req sentRequest) string {
		if len(req.StreamOptions) > 0 {
			return "stream_options: extra inputs are not permitted"
		}
		return ""
	},
	// Thinking mode: every assistant message that made tool calls, in
	// this turn or any earlier one, carries its reasoning_content
	// (DeepSeek's thinking-mode guide: "must be passed back to the API
	// in all subsequent requests"). An empty string is missing too:
	// DeepSeek answers it with the same 400 (LiteLLM's
	// _fill_reasoning_content sends one space for that reason).
	"deepseek": func(req sentRequest) string {
		for i, m := range req.Messages {
			if m.Role == "assistant" && len(m.ToolCalls) > 0 && (m.ReasoningContent == nil || *m.ReasoningContent == "") {
				return fmt.Sprintf("The `reasoning_content` in the thinking mode must be passed back to the API (message index %d)", i)
			}
		}
		return ""
	},
	// Gemini 3: the first call of each assistant message of the current
	// turn (after the last user message) carries its thought signature.
	"gemini": func(req sentRequest) string {
		lastUser := -1
		for i, m := range req.Messages {
			if m.Role == "user" {
				lastUser = i
			}
		}
		for i := lastUser + 1; i < len(req.Messages); i++ {
			m := req.Messages[i]
			if m.Role == "assistant" && len(m.ToolCalls) > 0 &&
				(m.ToolCalls[0].ExtraContent == nil || m.ToolCalls[0].ExtraContent.Google.ThoughtSignature == "") {
				return fmt.Sprintf("function call is missing a thought_signature at message index %d", i)
			}
		}
		return ""
	},
}

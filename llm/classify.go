package llm

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// maxMessageLen caps the server text kept in an error message.
const maxMessageLen = 600

// errIdle is the cancellation cause set by the idle watchdog.
var errIdle = errors.New("idle watchdog")

// statusError classifies an HTTP error response from its status code,
// headers and body, as the server's dialect means them (nil: the generic
// one). Retryable: 408, 409, 429 (except an exhausted quota) and 5xx. Not
// retryable: everything else, and context-length errors whatever their
// status (servers send them with 400, 413 or even 500). The retry delay
// is the Retry-After header's, else the body's google.rpc.RetryInfo.
func statusError(d *Dialect, reqID uint64, status int, h http.Header, body []byte) fsm.LlmError {
	eb := parseErrorBody(body)
	serverMsg := eb.msg
	e := fsm.LlmError{Request: reqID, StatusCode: status, RetryAfter: retryAfter(h, time.Now())}
	if e.RetryAfter == 0 {
		e.RetryAfter = eb.retryDelay
	}
	c := classifyStatus(d, status, eb)
	e.Kind, e.Retryable = c.kind, c.retryable
	e.Message = fmt.Sprintf("%s (HTTP %d)", c.what, status)
	if serverMsg != "" {
		e.Message += ": " + serverMsg
	}
	if e.Retryable && e.RetryAfter > 0 {
		e.Message += "; retry in " + e.RetryAfter.String()
	}
	return e
}

// statusClass is what an HTTP error says: its kind, whether to retry,
// and the words for the user.
type statusClass struct {
	kind      fsm.ErrorKind
	retryable bool
	what      string
}

var (
	badKey       = statusClass{fsm.ErrorAuth, false, "the provider refused the credentials (check the API key)"}
	contextFull  = statusClass{fsm.ErrorContextLength, false, "the conversation is too long for the model"}
	rateLimited  = statusClass{fsm.ErrorRateLimited, true, "rate limited by the provider"}
	quotaGone    = statusClass{fsm.ErrorRateLimited, false, "the provider's quota is exhausted"}
	responsesAPI = statusClass{fsm.ErrorNotFound, false, `the model is served only by the Responses API (set model.api = "responses")`}
)

// statusClasses are the statuses that say what happened by themselves,
// when the body says nothing more.
var statusClasses = map[int]statusClass{
	http.StatusRequestTimeout:        {fsm.ErrorNetwork, true, "the provider timed out the request"},
	http.StatusConflict:              {fsm.ErrorServer, true, "the provider reported a conflict"},
	http.StatusUnauthorized:          badKey,
	http.StatusForbidden:             badKey,
	http.StatusNotFound:              {fsm.ErrorNotFound, false, "not found (check base_url and the model name)"},
	http.StatusRequestEntityTooLarge: {fsm.ErrorContextLength, false, "the request is too large for the provider"},
}

// classifyStatus reads an HTTP error: what the dialect recognises in the
// body first (a bad key; after a 429, a context-length error), then the
// status itself, then its range.
func classifyStatus(d *Dialect, status int, eb errorBody) statusClass {
	switch {
	case d.saysBadKey(eb.reason, eb.status, eb.code):
		return badKey
	case status == http.StatusTooManyRequests && eb.code == "insufficient_quota":
		return quotaGone
	case status == http.StatusTooManyRequests:
		return rateLimited
	case d.saysContextFull(eb.code, eb.msg):
		return contextFull
	case status == http.StatusNotFound && strings.Contains(eb.msg, "v1/responses"):
		return responsesAPI
	}
	if c, ok := statusClasses[status]; ok {
		return c
	}
	switch {
	case status >= 500:
		return statusClass{fsm.ErrorServer, true, "the provider failed"}
	case status >= 400:
		return statusClass{fsm.ErrorBadRequest, false, "the provider rejected the request"}
	}
	return statusClass{fsm.ErrorOther, false, "unexpected response"}
}

// streamErrorEvent classifies an error event received after the response
// started (`data: {"error": …}`, or llama.cpp's older `error: {…}` line).
// The server accepted the request, so an error without a recognisable
// code is taken as a transient server failure.
func streamErrorEvent(d *Dialect, reqID uint64, payload []byte) fsm.LlmError {
	eb := parseErrorBody(payload)
	msg, code := eb.msg, eb.code
	status := 0
	if n, err := strconv.Atoi(code); err == nil && n >= 400 && n < 600 {
		status = n
	}
	lc := strings.ToLower(code + " " + eb.status)
	switch {
	case d.saysContextFull(code, msg):
		return fsm.LlmError{Request: reqID, Kind: fsm.ErrorContextLength, StatusCode: status,
			Message: "the conversation is too long for the model (mid-stream error): " + msg}
	case status != 0:
		e := statusError(d, reqID, status, nil, payload)
		e.Message = "mid-stream error: " + e.Message
		return e
	case strings.Contains(lc, "rate_limit") || strings.Contains(lc, "resource_exhausted"):
		return fsm.LlmError{Request: reqID, Kind: fsm.ErrorRateLimited, Retryable: true, RetryAfter: eb.retryDelay,
			Message: "rate limited by the provider (mid-stream error): " + msg}
	case strings.Contains(lc, "invalid") || strings.Contains(lc, "bad_request"):
		return fsm.LlmError{Request: reqID, Kind: fsm.ErrorBadRequest,
			Message: "the provider rejected the request (mid-stream error): " + msg}
	default:
		return fsm.LlmError{Request: reqID, Kind: fsm.ErrorServer, Retryable: true,
			Message: "the provider failed mid-stream: " + msg}
	}
}

// transportError classifies an error from sending the request or reading
// the response. Connection failures are retryable; certificate errors
// are not, as retrying cannot fix them.
func transportError(reqID uint64, err error, midStream bool) fsm.LlmError {
	e := fsm.LlmError{Request: reqID, Kind: fsm.ErrorNetwork, Retryable: true}
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		e.Retryable = false
	}
	where := "cannot reach the provider"
	if midStream {
		where = "the connection to the provider broke mid-stream"
	}
	e.Message = where + ": " + err.Error()
	return e
}

// idleError is the error of a stream silent for longer than d.
func idleError(reqID uint64, d time.Duration) fsm.LlmError {
	return fsm.LlmError{Request: reqID, Kind: fsm.ErrorIdle, Retryable: true,
		Message: fmt.Sprintf("the provider sent nothing for %s (idle timeout)", d)}
}

// firstByteError is the error of a request whose server accepted the
// connection but sent no response for d.
func firstByteError(reqID uint64, d time.Duration) fsm.LlmError {
	return fsm.LlmError{Request: reqID, Kind: fsm.ErrorIdle, Retryable: true,
		Message: fmt.Sprintf("the provider did not answer within %s (first_byte_timeout)", d)}
}

// rawScalar returns a JSON string or number as text, "" otherwise.
func rawScalar(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// capText shortens s to maxMessageLen bytes on a rune boundary.
func capText(s string) string {
	if len(s) <= maxMessageLen {
		return s
	}
	cut := maxMessageLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// retryAfter reads the server's minimum delay: retry-after-ms (OpenAI's
// millisecond header) wins over Retry-After, which is either seconds or
// an HTTP date. Zero means none, or none that parses.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && !math.IsInf(ms, 0) && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

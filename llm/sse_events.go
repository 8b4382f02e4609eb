package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// decodeEvents reads a stream of JSON events (the Responses API's, the
// Messages API's), decoding each into an E and handing it, with its raw
// data, to handle until handle returns the final event (ok). The stream's
// own failures end it with one final event too: the idle watchdog fired
// (sctx's cause is errIdle), the stream closed before end (the event that
// ends a complete stream, named in the message), a transport error, an
// error event (read with dialect d), or a malformed event. Nothing is
// finished once ctx is done.
func decodeEvents[E any](ctx, sctx context.Context, reqID uint64, body io.Reader, d *Dialect, idle time.Duration, end string,
	finish func(fsm.Event), handle func(ev *E, data []byte) (fsm.Event, bool)) {
	sse := newSSEReader(body)
	for {
		data, kind, err := sse.next()
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil && errors.Is(context.Cause(sctx), errIdle):
			finish(idleError(reqID, idle))
			return
		case errors.Is(err, errNoDone), kind == sseDone:
			finish(fsm.LlmError{Request: reqID, Kind: fsm.ErrorStream, Retryable: true,
				Message: "the provider closed the stream before " + end})
			return
		case err != nil:
			finish(transportError(reqID, err, true))
			return
		case kind == sseError:
			finish(streamErrorEvent(d, reqID, data))
			return
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		var ev E
		if err := json.Unmarshal(data, &ev); err != nil {
			finish(fsm.LlmError{Request: reqID, Kind: fsm.ErrorStream,
				Message: fmt.Sprintf("the provider sent a malformed event (%v): %s", err, capText(string(data)))})
			return
		}
		if done, ok := handle(&ev, data); ok {
			finish(done)
			return
		}
	}
}

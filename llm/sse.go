package llm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxEventSize bounds one server-sent event. A whole file written by a
// tool call can arrive in a single chunk, so it is generous.
const maxEventSize = 32 << 20

// errNoDone is returned by sseReader.next when the body ends before the
// "data: [DONE]" event.
var errNoDone = errors.New("the stream ended without data: [DONE]")

// sseReader decodes a text/event-stream body into the data payloads of its
// events, per the WHATWG rules: lines are "field: value", an empty line
// dispatches the event, several data lines are joined with "\n", comment
// lines (":…") and other fields are ignored. It allocates nothing per
// event in the steady state.
type sseReader struct {
	r    *bufio.Reader
	data []byte // the pending event's data, reused across events
	line []byte // assembly buffer for lines longer than the bufio buffer
	has  bool   // a data field was seen for the pending event
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the data of the next event, valid until the following
// call. It returns (nil, true, nil) at "data: [DONE]", errNoDone when the
// body ends first, and the read error when reading fails.
func (s *sseReader) next() (data []byte, done bool, err error) {
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF {
				// Lenient: a final "data: [DONE]" without its blank line.
				if s.has && bytes.Equal(s.data, doneMarker) {
					return nil, true, nil
				}
				return nil, false, errNoDone
			}
			return nil, false, err
		}
		if len(line) == 0 {
			if !s.has {
				continue
			}
			s.has = false
			if bytes.Equal(s.data, doneMarker) {
				return nil, true, nil
			}
			return s.data, false, nil
		}
		name, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		if string(name) != "data" {
			continue // comment, event:, id:, retry:
		}
		if s.has {
			if len(s.data)+1+len(value) > maxEventSize {
				return nil, false, fmt.Errorf("server-sent event larger than %d bytes", maxEventSize)
			}
			s.data = append(s.data, '\n')
			s.data = append(s.data, value...)
		} else {
			s.data = append(s.data[:0], value...)
			s.has = true
		}
	}
}

var doneMarker = []byte("[DONE]")

// readLine returns the next line without its "\n" or "\r\n", valid until
// the next call.
func (s *sseReader) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.line = append(s.line[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(s.line) > maxEventSize {
				return nil, fmt.Errorf("server-sent line longer than %d bytes", maxEventSize)
			}
			line, err = s.r.ReadSlice('\n')
			s.line = append(s.line, line...)
		}
		line = s.line
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = nil // a last line without "\n"; EOF comes on the next call
		} else {
			return nil, err
		}
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, nil
}

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

// The kinds of event sseReader.next returns.
const (
	sseData  = iota // a data payload
	sseDone         // "data: [DONE]"
	sseError        // an error: llama.cpp's older "error: {…}" line, or an "event: error"
)

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
	// isErr marks the pending event as an error: an "error:" field
	// (whose value is its data) or "event: error".
	isErr bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next event: its data, valid until the following
// call, and its kind. It returns errNoDone when the body ends before
// "data: [DONE]", and the read error when reading fails.
func (s *sseReader) next() (data []byte, kind int, err error) {
	for {
		line, err := s.readLine()
		switch {
		case err == io.EOF:
			return s.atEOF()
		case err != nil:
			return nil, sseData, err
		case len(line) == 0:
			if data, kind, ok := s.dispatch(); ok {
				return data, kind, nil
			}
		default:
			if err := s.field(line); err != nil {
				return nil, sseData, err
			}
		}
	}
}

// atEOF ends the body: leniently, a final event without its blank line
// is dispatched; a body without "data: [DONE]" gives errNoDone.
func (s *sseReader) atEOF() ([]byte, int, error) {
	if s.has && s.isErr {
		s.has, s.isErr = false, false
		return s.data, sseError, nil
	}
	if s.has && bytes.Equal(s.data, doneMarker) {
		return nil, sseDone, nil
	}
	return nil, sseData, errNoDone
}

// dispatch ends the event at a blank line: its data and kind; ok is
// false when no data was read since the last one.
func (s *sseReader) dispatch() (data []byte, kind int, ok bool) {
	if !s.has {
		s.isErr = false
		return nil, 0, false
	}
	s.has = false
	if s.isErr {
		s.isErr = false
		return s.data, sseError, true
	}
	if bytes.Equal(s.data, doneMarker) {
		return nil, sseDone, true
	}
	return s.data, sseData, true
}

// field reads one "name: value" line: data (and error) lines add to the
// event's data, an "event: error" marks it an error; other fields
// (comments, id:, retry:) are ignored.
func (s *sseReader) field(line []byte) error {
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
	case "error":
		s.isErr = true
	case "event":
		if string(value) == "error" {
			s.isErr = true
		}
		return nil
	default:
		return nil // comment, id:, retry:
	}
	if !s.has {
		s.data = append(s.data[:0], value...)
		s.has = true
		return nil
	}
	if len(s.data)+1+len(value) > maxEventSize {
		return fmt.Errorf("server-sent event larger than %d bytes", maxEventSize)
	}
	s.data = append(s.data, '\n')
	s.data = append(s.data, value...)
	return nil
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

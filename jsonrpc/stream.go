package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// DefaultMaxMessageSize bounds the body of one incoming frame. A larger
// frame is refused at once, without waiting for its bytes, and reading
// resumes at the next frame header.
const DefaultMaxMessageSize = 64 << 20

// maxHeaderLine bounds one header line, so that a peer sending no newline
// cannot make us buffer without limit.
const maxHeaderLine = 4 << 10

// errBadHeader reports a malformed header block. The stream answers it
// with an error and resynchronises at the next "Content-Length:".
var errBadHeader = errors.New("malformed LSP header")

// ErrLostFrames ends the input when it ended while the stream was looking
// for the next frame after malformed input: the client's last messages
// were lost, so the server exits with an error status, never silently.
var ErrLostFrames = errors.New("input ended inside malformed input")

// headerMarker is what resynchronisation looks for (case-insensitively):
// the start of the next frame. It cannot occur inside a JSON body, since
// a JSON text holds no bare header name outside its strings, and the
// header's own line break ("\r\n") is escaped inside them.
const headerMarker = "content-length:"

// frameStream is a jsonrpc2.Stream with LSP Content-Length framing that
// survives bad input: a body that is not JSON is answered with a ParseError
// response (id null) and reading goes on at the next frame; a malformed
// header or an oversized Content-Length is answered at once with an error
// response (id null), logged, and reading resumes at the next
// "Content-Length:" header. Only the end of input ends the stream.
//
// It replaces jsonrpc2's header stream, which ends the connection on the
// first unparsable body and allocates whatever Content-Length declares (up
// to 1 GiB) before reading it.
type frameStream struct {
	rwc     io.ReadWriteCloser
	in      *bufio.Reader
	maxBody int
	log     *slog.Logger

	writeMu sync.Mutex
	wbuf    []byte // the last body, reused
	fbuf    []byte // the last frame, reused
	// writeErr is set by the first failed write (a broken pipe); onBroken
	// is called once then.
	writeErr error
	onBroken func(error)

	// onEnd, if set, is called once when reading ends (end of input, a
	// broken pipe, or ErrLostFrames).
	onEnd   func(error)
	endOnce sync.Once
}

func newFrameStream(rwc io.ReadWriteCloser, maxBody int, log *slog.Logger, onBroken func(error)) *frameStream {
	if maxBody <= 0 {
		maxBody = DefaultMaxMessageSize
	}
	return &frameStream{rwc: rwc, in: bufio.NewReaderSize(rwc, 64<<10), maxBody: maxBody, log: log, onBroken: onBroken}
}

// Read implements jsonrpc2.Stream.
func (s *frameStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	msg, n, err := s.read(ctx)
	if err != nil && s.onEnd != nil {
		s.endOnce.Do(func() { s.onEnd(err) })
	}
	return msg, n, err
}

func (s *frameStream) read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		length, err := s.readHeader()
		if errors.Is(err, errBadHeader) {
			s.log.Error("malformed frame header; skipping to the next frame", "err", err)
			s.replyError(ctx, jsonrpc2.Errorf(jsonrpc2.ParseError, "%v; skipping to the next Content-Length header", err))
			if err := s.resync(); err != nil {
				return nil, 0, err
			}
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		if length > s.maxBody {
			// Refused before any of its bytes are read: a client that
			// declared a huge length and sent nothing gets its answer now.
			s.log.Error("refused an oversized message; skipping to the next frame", "bytes", length, "limit", s.maxBody)
			s.replyError(ctx, jsonrpc2.Errorf(jsonrpc2.InvalidRequest,
				"message of %d bytes exceeds the limit of %d bytes", length, s.maxBody))
			if err := s.resync(); err != nil {
				return nil, 0, err
			}
			continue
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(s.in, body); err != nil {
			return nil, 0, unexpected(err)
		}
		msg, err := jsonrpc2.DecodeMessage(body)
		if err != nil {
			s.log.Warn("unparsable message", "err", err, "bytes", length)
			code := jsonrpc2.ParseError
			if errors.Is(err, jsonrpc2.ErrInvalidRequest) {
				code = jsonrpc2.InvalidRequest
			}
			s.replyError(ctx, jsonrpc2.Errorf(code, "cannot decode message: %v", err))
			continue
		}
		return msg, int64(length), nil
	}
}

// resync discards input up to the next "Content-Length:" (any case),
// leaving it unread. At the end of input it returns ErrLostFrames.
func (s *frameStream) resync() error {
	keep := len(headerMarker) - 1
	for {
		n := max(s.in.Buffered(), len(headerMarker))
		buf, err := s.in.Peek(n)
		if i := indexFold(buf, headerMarker); i >= 0 {
			_, _ = s.in.Discard(i)
			return nil
		}
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return fmt.Errorf("%w: no frame header followed the malformed input", ErrLostFrames)
			}
			return err
		}
		if len(buf) > keep {
			_, _ = s.in.Discard(len(buf) - keep)
		}
	}
}

// indexFold returns the index of the first occurrence of the lower-case
// ASCII needle in b, ignoring case, or -1.
func indexFold(b []byte, needle string) int {
	for i := 0; i+len(needle) <= len(b); i++ {
		if bytes.EqualFold(b[i:i+len(needle)], []byte(needle)) {
			return i
		}
	}
	return -1
}

func (s *frameStream) replyError(ctx context.Context, e *jsonrpc2.Error) {
	_, _ = s.Write(ctx, jsonrpc2.NewResponse(jsonrpc2.ID{}, nil, e))
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readHeader reads one header block and returns its Content-Length. It
// returns io.EOF at a clean end of input.
func (s *frameStream) readHeader() (int, error) {
	length := -1
	lines := 0
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && lines > 0 {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		lines++
		if len(line) == 0 {
			if lines == 1 {
				// Tolerate stray blank lines between frames.
				lines = 0
				continue
			}
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, fmt.Errorf("%w: %q", errBadHeader, truncateBytes(line, 80))
		}
		if bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")) {
			n, err := strconv.Atoi(string(bytes.TrimSpace(value)))
			if err != nil || n <= 0 {
				return 0, fmt.Errorf("%w: Content-Length %q", errBadHeader, truncateBytes(value, 40))
			}
			length = n
		}
	}
	if length < 0 {
		return 0, fmt.Errorf("%w: no Content-Length", errBadHeader)
	}
	return length, nil
}

func (s *frameStream) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.in.ReadSlice('\n')
		line = append(line, chunk...)
		if err == nil {
			break
		}
		if err == bufio.ErrBufferFull && len(line) < maxHeaderLine {
			continue
		}
		if err == bufio.ErrBufferFull {
			return nil, fmt.Errorf("%w: header line longer than %d bytes", errBadHeader, maxHeaderLine)
		}
		if err == io.EOF && len(line) > 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if len(line) > maxHeaderLine {
		return nil, fmt.Errorf("%w: header line longer than %d bytes", errBadHeader, maxHeaderLine)
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

func truncateBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// Write implements jsonrpc2.Stream: one frame, one write.
func (s *frameStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.writeErr != nil {
		return 0, s.writeErr
	}
	body := jsonrpc2.AppendMessage(s.wbuf[:0], msg)
	n, err := s.writeFrameLocked(body)
	if cap(body) <= 1<<20 {
		s.wbuf = body[:0]
	} else {
		s.wbuf = nil
	}
	return n, err
}

// writeBody writes one frame whose body is already encoded. Like Write it
// is safe for concurrent use; unlike it, it allocates nothing once its
// buffer has grown to the frames' size (issue 16 item 3).
func (s *frameStream) writeBody(body []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.writeErr != nil {
		return s.writeErr
	}
	_, err := s.writeFrameLocked(body)
	return err
}

// writeFrameLocked writes the header and body as one write, composing
// them in a buffer kept for the next frame. The caller holds writeMu.
func (s *frameStream) writeFrameLocked(body []byte) (int64, error) {
	frame := append(s.fbuf[:0], "Content-Length: "...)
	frame = strconv.AppendInt(frame, int64(len(body)), 10)
	frame = append(frame, "\r\n\r\n"...)
	frame = append(frame, body...)
	if cap(frame) <= 1<<20 {
		s.fbuf = frame[:0]
	} else {
		s.fbuf = nil
	}
	n, err := s.rwc.Write(frame)
	if err != nil {
		s.writeErr = err
		if s.onBroken != nil {
			s.onBroken(err)
		}
	}
	return int64(n), err
}

// Close implements jsonrpc2.Stream.
func (s *frameStream) Close() error { return s.rwc.Close() }

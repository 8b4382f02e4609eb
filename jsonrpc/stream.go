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
// frame is skipped (its bytes are read and dropped) and answered with an
// error; the connection goes on.
const DefaultMaxMessageSize = 64 << 20

// maxHeaderLine bounds one header line, so that a peer sending no newline
// cannot make us buffer without limit.
const maxHeaderLine = 4 << 10

// errBadHeader reports a header block we cannot resynchronise after. The
// connection ends cleanly on it.
var errBadHeader = errors.New("malformed LSP header")

// frameStream is a jsonrpc2.Stream with LSP Content-Length framing that
// survives bad input: a body that is not JSON is answered with a ParseError
// response (id null) and an oversized body with an InvalidRequest one, and
// reading goes on at the next frame. Only a malformed header block, which
// leaves no frame boundary to resume at, ends the stream.
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
	wbuf    []byte
	// writeErr is set by the first failed write (a broken pipe); onBroken
	// is called once then.
	writeErr error
	onBroken func(error)

	// onEnd, if set, is called once when reading ends (end of input, a
	// broken pipe or a malformed header).
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
		s.endOnce.Do(func() { go s.onEnd(err) })
	}
	return msg, n, err
}

func (s *frameStream) read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		length, err := s.readHeader()
		if err != nil {
			return nil, 0, err
		}
		if length > s.maxBody {
			if _, err := io.CopyN(io.Discard, s.in, int64(length)); err != nil {
				return nil, 0, unexpected(err)
			}
			s.log.Warn("dropped an oversized message", "bytes", length, "limit", s.maxBody)
			s.replyError(ctx, jsonrpc2.Errorf(jsonrpc2.InvalidRequest,
				"message of %d bytes exceeds the limit of %d bytes", length, s.maxBody))
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
	// Compose header and body into one buffer: the header goes first, so
	// build it after the body is known and shift.
	header := strconv.AppendInt([]byte("Content-Length: "), int64(len(body)), 10)
	header = append(header, "\r\n\r\n"...)
	frame := make([]byte, 0, len(header)+len(body))
	frame = append(append(frame, header...), body...)
	if cap(body) <= 1<<20 {
		s.wbuf = body[:0]
	} else {
		s.wbuf = nil
	}
	n, err := s.rwc.Write(frame)
	if err != nil {
		s.writeErr = err
		if s.onBroken != nil {
			go s.onBroken(err)
		}
	}
	return int64(n), err
}

// Close implements jsonrpc2.Stream.
func (s *frameStream) Close() error { return s.rwc.Close() }

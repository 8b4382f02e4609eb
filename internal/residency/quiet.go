package residency

import (
	"io"
	"sync"
	"time"
)

// Quiet gives back the executable's pages (ReleaseImage) once a
// long-lived process has been quiet for a while: no byte read from or
// written to its protocol stream. The first release comes after
// first with nothing on the stream, once its start is over — however
// long the start took, which depends on the machine's load, not on the
// clock — and once more after later, for what the start's tail mapped;
// each later one after later with nothing on the stream since the last
// traffic, so a process that ran for a while (a turn, an editor's
// requests) gives back what that mapped when it is left alone, without
// waking while idle.
//
// A nil *Quiet passes its readers and writers through unchanged.
type Quiet struct {
	first, later time.Duration
	release      func()

	mu       sync.Mutex
	timer    *time.Timer
	released int // releases so far
	armed    bool
}

// NewQuiet starts the quiet clock: release runs first after first with
// no traffic, then after later once traffic came and went again.
func NewQuiet(first, later time.Duration, release func()) *Quiet {
	q := &Quiet{first: first, later: later, release: release, armed: true}
	q.timer = time.AfterFunc(first, q.fire)
	return q
}

func (q *Quiet) fire() {
	q.mu.Lock()
	if !q.armed {
		q.mu.Unlock()
		return
	}
	q.released++
	// After the first release, one more once the start has surely
	// settled (work it left running may have mapped pages back without a
	// byte on the stream); after that, only traffic re-arms the clock.
	q.armed = q.released == 1
	if q.armed {
		q.timer.Reset(q.later)
	}
	q.mu.Unlock()
	q.release()
}

// Touch records traffic: the quiet period starts again from now.
func (q *Quiet) Touch() {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.armed = true
	wait := q.later
	if q.released == 0 {
		wait = q.first
	}
	q.timer.Reset(wait)
}

// Stop ends the clock; no release runs after it returns, unless one had
// already begun.
func (q *Quiet) Stop() {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.armed = false
	q.timer.Stop()
}

// Reader returns r, each Read of which is traffic.
func (q *Quiet) Reader(r io.Reader) io.Reader {
	if q == nil {
		return r
	}
	return quietReader{r, q}
}

// Writer returns w, each Write to which is traffic.
func (q *Quiet) Writer(w io.Writer) io.Writer {
	if q == nil {
		return w
	}
	return quietWriter{w, q}
}

type quietReader struct {
	r io.Reader
	q *Quiet
}

func (r quietReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.q.Touch() // after the read: a read waiting for input is not traffic
	return n, err
}

type quietWriter struct {
	w io.Writer
	q *Quiet
}

func (w quietWriter) Write(p []byte) (int, error) {
	w.q.Touch()
	return w.w.Write(p)
}

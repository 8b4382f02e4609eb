package residency

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The release waits for quiet: traffic keeps pushing it back, each
// release comes at least a quiet period after the last traffic before
// it, the start gets one more after it settled, and then nothing is
// released while nothing happens.
func TestQuietReleasesOncePerQuietPeriod(t *testing.T) {
	const first, later = 150 * time.Millisecond, 300 * time.Millisecond
	var lastTraffic atomic.Int64 // unix nanoseconds, before each read or write
	type release struct{ at, after time.Time }
	released := make(chan release, 20)
	q := NewQuiet(first, later, func() {
		released <- release{time.Now(), time.Unix(0, lastTraffic.Load())}
	})
	defer q.Stop()
	r := q.Reader(strings.NewReader(strings.Repeat("x", 100)))
	w := q.Writer(&bytes.Buffer{})
	traffic := func() {
		lastTraffic.Store(time.Now().UnixNano())
		buf := make([]byte, 1)
		if _, err := r.Read(buf); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	lastTraffic.Store(time.Now().UnixNano())
	// Traffic every first/3 for a while, then quiet.
	for i := 0; i < 8; i++ {
		traffic()
		time.Sleep(first / 3) // the traffic's pace, not a wait for a result
	}
	next := func() release {
		t.Helper()
		select {
		case rel := <-released:
			return rel
		case <-time.After(60 * time.Second):
			t.Fatal("no release a minute after the traffic stopped")
			return release{}
		}
	}
	check := func(rel release, period time.Duration) {
		t.Helper()
		if quiet := rel.at.Sub(rel.after); quiet < period {
			t.Errorf("released %v after the last traffic, before %v of quiet", quiet, period)
		}
	}
	// The first release (a stalled machine may have given one during the
	// traffic: then it was quiet, and the check holds all the same), then
	// the start's second one, a later period after the first.
	firstRel := next()
	check(firstRel, first)
	settle := next()
	if gap := settle.at.Sub(firstRel.at); gap < later {
		t.Errorf("the second release came %v after the first, before %v", gap, later)
	}
	// Idle: no release without traffic.
	select {
	case <-released:
		t.Fatal("released again with no traffic since")
	case <-time.After(2 * later):
	}
	// Traffic again: one more release, a later period after it.
	traffic()
	check(next(), later)
}

func TestNilQuietPassesThrough(t *testing.T) {
	var q *Quiet
	r := strings.NewReader("a")
	if q.Reader(r) != r {
		t.Error("a nil Quiet wrapped the reader")
	}
	q.Touch()
	q.Stop()
}

package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/secret"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// ErrIncompatible marks a journal this version cannot read.
var ErrIncompatible = errors.New("incompatible journal")

// Step is one record of a journal being read.
type Step struct {
	Line   int
	Config *fsm.Config // a config record
	// Commit is a "commit" record (an auto-commit started); commitEnd is
	// set for "commit-end".
	Commit    *CommitRecord
	CommitEnd bool
	// Restore is a "restore" record (a revert's restores planned);
	// RestoreEnd is set for "restore-end".
	Restore    *RestoreRecord
	RestoreEnd bool
	Event      fsm.Event // else an event
}

// Scan is what reading a journal found besides its records.
type Scan struct {
	Header Header
	// Good is the size of the journal up to its last complete line.
	Good int64
	// Torn is set when the last line is incomplete; it is skipped.
	Torn bool
	// Bad lists the lines that could not be decoded; they are skipped.
	Bad []string
}

// Read reads a journal and calls fn for each record in order. It
// returns an error wrapping ErrIncompatible when the header is missing or
// of another version.
func Read(r io.Reader, fn func(Step)) (Scan, error) {
	return ReadUnsealed(r, nil, fn)
}

// ReadUnsealed is Read giving back, with unseal, the
// secrets sealed in what the model wrote (journal.writeEvent); nil
// leaves the marks.
func ReadUnsealed(r io.Reader, unseal *secret.Redactor, fn func(Step)) (Scan, error) {
	var sc Scan
	lines := lineReader{br: bufio.NewReaderSize(r, 64<<10)}
	var off int64
	for line := 1; ; line++ {
		b, err := lines.next()
		if len(b) == 0 && err == io.EOF {
			return sc, nil
		}
		if err != nil && err != io.EOF {
			return sc, fmt.Errorf("journal: read: %w", err)
		}
		if b[len(b)-1] != '\n' {
			// Written by a daemon killed mid-write: skip it.
			sc.Torn = true
			return sc, nil
		}
		off += int64(len(b))
		b = bytes.TrimSpace(b)
		switch {
		case line == 1:
			if err := sc.readHeader(b); err != nil {
				return sc, err
			}
		case len(b) > 0:
			step, err := recordStep(line, b, unseal)
			if err != nil {
				sc.Bad = append(sc.Bad, err.Error())
				break
			}
			fn(step)
		}
		sc.Good = off
	}
}

// lineReader reads a journal's lines, in place when a line fits the
// buffer: every record is decoded (copied) before the next read.
type lineReader struct {
	br   *bufio.Reader
	long []byte // a line longer than br's buffer, assembled
}

// next reads the next line, its '\n' included (none at the end of a torn
// last line).
func (lr *lineReader) next() ([]byte, error) {
	b, err := lr.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		lr.long = append(lr.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = lr.br.ReadSlice('\n')
			lr.long = append(lr.long, b...)
		}
		b = lr.long
	}
	return b, err
}

// readHeader reads the journal's first line, its header, which must be of
// this version.
func (sc *Scan) readHeader(b []byte) error {
	if err := json.Unmarshal(b, &sc.Header); err != nil || sc.Header.Journal != Magic {
		return fmt.Errorf("%w: no journal header", ErrIncompatible)
	}
	if sc.Header.Version != Version {
		return fmt.Errorf("%w: version %d, this loom-lsp reads version %d", ErrIncompatible, sc.Header.Version, Version)
	}
	return nil
}

// recordStep decodes the record on line (b): a configuration, a commit's
// or a restore's start or end, or an event (with the secrets in what the
// model wrote unsealed, unless unseal is nil). The error says why the
// line is skipped.
func recordStep(line int, b []byte, unseal *secret.Redactor) (Step, error) {
	var rec Record
	if tag, raw, ok := splitEventRecord(b); ok {
		rec = Record{Type: tag, Event: raw}
	} else if err := json.Unmarshal(b, &rec); err != nil {
		return Step{}, fmt.Errorf("line %d: %v", line, err)
	}
	switch rec.Type {
	case "config":
		if rec.Config == nil {
			return Step{}, fmt.Errorf("line %d: config record without config", line)
		}
		return Step{Line: line, Config: rec.Config}, nil
	case "commit", "commit-end":
		return Step{Line: line, Commit: rec.Commit, CommitEnd: rec.Type == "commit-end"}, nil
	case "restore", "restore-end":
		return Step{Line: line, Restore: rec.Restore, RestoreEnd: rec.Type == "restore-end"}, nil
	}
	if unseal != nil && modelWritten[rec.Type] {
		rec.Event = json.RawMessage(unseal.Unseal(string(rec.Event)))
	}
	ev, err := DecodeEvent(rec.Type, rec.Event)
	if err != nil {
		return Step{}, fmt.Errorf("line %d: %v", line, err)
	}
	return Step{Line: line, Event: ev}, nil
}

// splitEventRecord reads an event record in the exact form AppendEvent
// writes, {"t":"Tag","e":{…}}, without a first JSON pass over the whole
// line (its event is decoded once, by DecodeEvent, which checks it). ok is
// false for any other form, which is then decoded in full.
func splitEventRecord(b []byte) (tag string, raw json.RawMessage, ok bool) {
	const head, mid = `{"t":"`, `","e":`
	if !bytes.HasPrefix(b, []byte(head)) || !bytes.HasSuffix(b, []byte("}")) {
		return "", nil, false
	}
	rest := b[len(head):]
	end := bytes.IndexByte(rest, '"')
	if end <= 0 || !bytes.HasPrefix(rest[end:], []byte(mid)) {
		return "", nil, false
	}
	for _, c := range rest[:end] {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return "", nil, false
		}
	}
	return string(rest[:end]), rest[end+len(mid) : len(rest)-1], true
}

// Replayed is a conversation restored from a journal.
type Replayed struct {
	M     *fsm.Machine
	Scan  Scan
	Steps int
	// Rejected lists events the machine refused during the replay.
	Rejected []string
	// PendingCommit is an auto-commit that started and never ended.
	PendingCommit *CommitRecord
	// PendingRestore are a revert's restores planned and never ended.
	PendingRestore *RestoreRecord
	// PendingRewind is a files rewind whose restores were planned and
	// whose fsm.Rewind never followed (the daemon died in between): its
	// Rewind is the event to step, once the branch is known to have
	// moved, with the files it left when its restores ended.
	PendingRewind *RestoreRecord
	// Commits are the auto-commits the conversation made and did not
	// rewind, with their turns, for a rewind after a restart.
	Commits CommitLog
	// Children are the subagents the conversation started, in order
	// (Spawned).
	Children []ChildRecord
}

// Replay reads the journal at path and steps its events through a
// fresh machine, built from the journal's first configuration record (else
// from cfg), performing none of the actions. It returns ErrIncompatible
// for a journal it cannot read.
func Replay(path string, cfg fsm.Config) (Replayed, error) {
	return ReplayUnsealed(path, cfg, nil)
}

// ReplayUnsealed is Replay giving back, with unseal, the
// secrets sealed in what the model wrote.
func ReplayUnsealed(path string, cfg fsm.Config, unseal *secret.Redactor) (Replayed, error) {
	f, err := os.Open(path)
	if err != nil {
		return Replayed{}, err
	}
	defer f.Close()
	r := replayer{cfg: cfg}
	sc, err := ReadUnsealed(f, unseal, r.step)
	rp := r.rp
	rp.Scan = sc
	if err != nil {
		return rp, err
	}
	if rp.M == nil {
		rp.M = fsm.New(cfg)
	}
	return rp, nil
}

// replayer steps a journal's records into what Replay gives back.
type replayer struct {
	rp  Replayed
	cfg fsm.Config // the configuration before the journal's first
	// pendingTurn is the turn the pending commit was made in.
	pendingTurn uint64
}

// step takes one record: a restore, a commit, a configuration or an
// event.
func (r *replayer) step(st Step) {
	switch {
	case st.Restore != nil || st.RestoreEnd:
		r.rp.PendingRestore = st.Restore
		if st.RestoreEnd {
			r.rp.PendingRestore = nil
		}
		r.rp.PendingRewind = pendingRewind(r.rp.PendingRewind, st)
	case st.Commit != nil || st.CommitEnd:
		r.commit(st)
	case st.Config != nil:
		if r.rp.M == nil {
			r.rp.M = fsm.New(*st.Config)
		} else {
			r.rp.M.Reconfigure(*st.Config)
		}
	default:
		r.event(st)
	}
}

// commit takes a commit record: the commit planned (pending until its
// end), or its end with the commit made, if any.
func (r *replayer) commit(st Step) {
	rp := &r.rp
	if !st.CommitEnd {
		rp.PendingCommit = st.Commit
		if rp.M != nil {
			r.pendingTurn = rp.M.State().Turn
		}
		return
	}
	if st.Commit != nil && st.Commit.SHA != "" {
		rp.Commits.Made(rp.PendingCommit, st.Commit.SHA, r.pendingTurn)
	}
	rp.PendingCommit = nil
}

// event steps an event through the machine (made from cfg when no
// configuration came first); one the machine rejects is noted.
func (r *replayer) event(st Step) {
	rp := &r.rp
	if rp.M == nil {
		rp.M = fsm.New(r.cfg)
	}
	acts, err := rp.M.Step(st.Event)
	if err != nil {
		rp.Rejected = append(rp.Rejected, fmt.Sprintf("line %d: %v", st.Line, err))
		return
	}
	rp.Children = Spawned(rp.Children, st.Event, acts)
	rp.Commits.Stepped(st.Event)
	if _, ok := st.Event.(fsm.Rewind); ok {
		rp.PendingRewind = nil
	}
	rp.Steps++
}

// pendingRewind follows a files rewind through its restore records: a
// "restore" of a rewind starts it, its "restore-end" brings the files it
// left, and an end without them (the revert failed) drops it.
func pendingRewind(was *RestoreRecord, st Step) *RestoreRecord {
	switch {
	case !st.RestoreEnd && st.Restore != nil && st.Restore.Rewind != nil:
		return st.Restore
	case !st.RestoreEnd:
		return nil
	case was == nil || st.Restore == nil || st.Restore.Rewind == nil:
		return nil
	}
	ended := *was
	ended.Rewind = st.Restore.Rewind
	return &ended
}

// Describe replays the journal read from r through a fresh state
// machine and writes, for every step, the event, then the actions it
// produced and the machine's state, in fsm.Describe's canonical text. It is
// the `loom-lsp replay` debugging command.
func Describe(r io.Reader, w io.Writer) error {
	var m *fsm.Machine
	var steps bytes.Buffer
	bw := bufio.NewWriter(&steps)
	sc, err := Read(r, func(st Step) {
		if st.Config != nil {
			if m == nil {
				m = fsm.New(*st.Config)
				fmt.Fprintf(bw, "%d: new machine (%d tools, max_iterations=%d, max_retries=%d)\n", st.Line, len(st.Config.Tools), st.Config.MaxIterations, st.Config.MaxRetries)
				fmt.Fprintf(bw, "  state: %s\n", m.State().Describe())
			} else {
				m.Reconfigure(*st.Config)
				fmt.Fprintf(bw, "%d: reconfigured\n", st.Line)
			}
			return
		}
		if st.Commit != nil || st.CommitEnd {
			fmt.Fprintf(bw, "%d: %s\n", st.Line, describeCommit(st))
			return
		}
		if st.Restore != nil || st.RestoreEnd {
			fmt.Fprintf(bw, "%d: %s\n", st.Line, describeRestore(st))
			return
		}
		if m == nil {
			m = fsm.New(fsm.Config{})
		}
		fmt.Fprintf(bw, "%d: %s\n", st.Line, fsm.Describe(st.Event))
		acts, err := m.Step(st.Event)
		if err != nil {
			fmt.Fprintf(bw, "  error: %v\n", err)
		}
		for _, a := range acts {
			fmt.Fprintf(bw, "  %s\n", a.Describe())
		}
		fmt.Fprintf(bw, "  state: %s\n", m.State().Describe())
	})
	bw.Flush()
	out := bufio.NewWriter(w)
	if sc.Header.Journal != "" {
		fmt.Fprintf(out, "journal of %s, version %d, created %s\n", sc.Header.Folder, sc.Header.Version, sc.Header.Created.Format(time.RFC3339))
	}
	out.Write(steps.Bytes())
	bw = out
	for _, b := range sc.Bad {
		fmt.Fprintf(bw, "skipped %s\n", b)
	}
	if sc.Torn {
		fmt.Fprintf(bw, "skipped a torn last line\n")
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// CommitLog rebuilds, while a journal is Replayed, the auto-commits the
// conversation made and their turns, so that a rewind after a restart
// takes them back too. Files rewinds in the journal take commits out;
// their redos put them back.
type CommitLog struct {
	Commits []*gitcommit.Result
	TurnOf  map[string]uint64
	// rewound is the stack of commits taken out by rewinds not redone.
	rewound [][]*gitcommit.Result
}

// made records the commit of plan rec, made as sha in turn.
func (l *CommitLog) Made(rec *CommitRecord, sha string, turn uint64) {
	if rec == nil || rec.Plan == nil {
		return
	}
	p := rec.Plan
	res := &gitcommit.Result{SHA: sha, Parent: p.Parent, Files: p.Files(), Message: p.Message, Entries: p.Entries}
	l.Commits = append(l.Commits, res)
	if l.TurnOf == nil {
		l.TurnOf = map[string]uint64{}
	}
	l.TurnOf[sha] = turn
}

// stepped follows an event the machine took.
func (l *CommitLog) Stepped(ev fsm.Event) {
	switch e := ev.(type) {
	case fsm.Rewind:
		var taken []*gitcommit.Result
		if e.Restore == fsm.RestoreFiles || e.Restore == fsm.RestoreBoth {
			kept := l.Commits[:0:0]
			for _, c := range l.Commits {
				if l.TurnOf[c.SHA] >= e.Turn {
					taken = append(taken, c)
				} else {
					kept = append(kept, c)
				}
			}
			l.Commits = kept
		}
		l.rewound = append(l.rewound, taken)
	case fsm.Redo:
		if n := len(l.rewound); n > 0 {
			l.Commits = append(l.Commits, l.rewound[n-1]...)
			l.rewound = l.rewound[:n-1]
		}
	case fsm.UserInput:
		l.rewound = nil
	}
}

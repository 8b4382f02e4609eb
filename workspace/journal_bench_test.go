package workspace

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// writeConversation journals turns turns through a real machine, each a
// prompt and an answer streamed in chunks text deltas, as a session does.
func writeConversation(tb testing.TB, path, folder string, turns, chunks int) {
	tb.Helper()
	cfg := fsm.Config{MaxIterations: 25, MaxRetries: 3}
	m := fsm.New(cfg)
	j, err := journal.Create(path, folder, time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	if err := j.AppendConfig(cfg); err != nil {
		tb.Fatal(err)
	}
	step := func(ev fsm.Event) []fsm.Action {
		acts, err := m.Step(ev)
		if err != nil {
			tb.Fatalf("%s: %v", fsm.Describe(ev), err)
		}
		if err := j.AppendEvent(ev); err != nil {
			tb.Fatal(err)
		}
		return acts
	}
	for turn := range turns {
		var req uint64
		for _, a := range step(fsm.UserInput{Text: "question " + strings.Repeat("x", turn%7)}) {
			if r, ok := a.(fsm.SendLlmRequest); ok {
				req = r.Request
			}
		}
		for range chunks {
			step(fsm.LlmTextDelta{Request: req, Text: "word "})
		}
		step(fsm.LlmCompleted{Request: req, FinishReason: "stop"})
		if err := j.Sync(); err != nil {
			tb.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		tb.Fatal(err)
	}
}

// A turn's text is journaled once: one LlmTextDelta record per message,
// written before the LlmCompleted that ends it.
func TestJournalStoresATurnsTextOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	writeConversation(t, path, "/w", 2, 1000)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tags []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec journal.Record
		json.Unmarshal(sc.Bytes(), &rec)
		if rec.Type == "LlmTextDelta" {
			var d fsm.LlmTextDelta
			json.Unmarshal(rec.Event, &d)
			if d.Text != strings.Repeat("word ", 1000) {
				t.Fatalf("coalesced delta holds %d bytes", len(d.Text))
			}
		}
		if rec.Type != "" {
			tags = append(tags, rec.Type)
		}
	}
	want := "config UserInput LlmTextDelta LlmCompleted UserInput LlmTextDelta LlmCompleted"
	if got := strings.Join(tags, " "); got != want {
		t.Fatalf("records %s\nwant    %s", got, want)
	}
	rp, err := journal.Replay(path, fsm.Config{})
	if err != nil || len(rp.Rejected) > 0 {
		t.Fatalf("replay: %v %v", err, rp.Rejected)
	}
	if msgs := rp.M.Messages(); len(msgs) != 4 || msgs[1].Content != strings.Repeat("word ", 1000) {
		t.Fatalf("replayed %d messages", len(msgs))
	}
}

// BenchmarkJournalTurn20kChunks journals one turn streamed in 20,000
// chunks and reports the journal's size, next to what one line per chunk
// (the format before coalescing) takes for the same turn.
func BenchmarkJournalTurn20kChunks(b *testing.B) {
	dir := b.TempDir()
	var size int64
	for b.Loop() {
		path := filepath.Join(dir, "j.jsonl")
		writeConversation(b, path, "/w", 1, 20_000)
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		size = st.Size()
	}
	line, _ := json.Marshal(journal.Record{Type: "LlmTextDelta", Event: json.RawMessage(`{"Request":1,"Text":"word "}`)})
	b.ReportMetric(float64(size), "journal-bytes")
	b.ReportMetric(float64(20_000*(len(line)+1)), "per-chunk-lines-bytes")
}

// BenchmarkResume starts sessions on two folders, alternately: one whose
// journal holds a 200-turn conversation (each answer streamed in 200
// chunks) and one whose journal is empty, the way a restarted daemon or
// `exec --resume` does, and reports the ratio of their times (goal: <= 2),
// so that load on a shared machine weighs on both alike.
func BenchmarkResume(b *testing.B) {
	type fixture struct {
		state, folder string
		turns         int
		took          time.Duration
		bytes         int64
	}
	fixtures := []*fixture{{turns: 0}, {turns: 200}}
	for _, f := range fixtures {
		f.state, f.folder = b.TempDir(), b.TempDir()
		f.folder, _ = filepath.EvalSymlinks(f.folder)
		path := journal.Path(f.state, f.folder)
		writeConversation(b, path, f.folder, f.turns, 200)
		st, _ := os.Stat(path)
		f.bytes = st.Size()
	}
	resume := func(f *fixture) {
		start := time.Now()
		h := NewHost(HostOptions{
			Editor: newRecordingEditor(),
			Config: func(string, []config.Override) (config.Config, error) {
				cfg := config.Default()
				cfg.Model.Name = "bench"
				return cfg, nil
			},
			Provider: func(config.Config, func(string) string) (llm.Provider, error) {
				return funcProvider(func(context.Context, llm.Request, func(fsm.Event)) {}), nil
			},
			StateDir: f.state,
		})
		s, err := h.AddFolder(f.folder)
		if err != nil {
			b.Fatal(err)
		}
		if st, err := s.Status(context.Background()); err != nil || st.Turn != uint64(f.turns) {
			b.Fatalf("resumed turn %d, %v; want %d", st.Turn, err, f.turns)
		}
		f.took += time.Since(start)
		h.Close()
	}
	b.ReportAllocs()
	for b.Loop() {
		resume(fixtures[0])
		resume(fixtures[1])
	}
	empty, full := fixtures[0], fixtures[1]
	b.ReportMetric(float64(full.took)/float64(empty.took), "x-empty")
	b.ReportMetric(float64(empty.took.Microseconds())/float64(b.N)/1000, "empty-ms/op")
	b.ReportMetric(float64(full.took.Microseconds())/float64(b.N)/1000, "200-turns-ms/op")
	b.ReportMetric(float64(full.bytes), "200-turns-journal-bytes")
}

// Past conversations are pruned by count and age; the live journal and
// other folders' journals are never touched.
func TestPruneJournalsByCountAndAge(t *testing.T) {
	dir := t.TempDir()
	live := journal.Path(dir, "/work/a")
	other := journal.Path(dir, "/work/b")
	now := time.Now()
	write := func(path string, age time.Duration) {
		if err := os.WriteFile(path, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	write(live, 100*24*time.Hour)
	write(other, time.Hour)
	asideOther := journal.AsideName(other, "reset", now.Add(-time.Hour))
	write(asideOther, 50*24*time.Hour)
	var pasts []string
	for i, age := range []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour, 40 * 24 * time.Hour} {
		p := journal.AsideName(live, "reset", now.Add(-time.Duration(i)*time.Minute))
		write(p, age)
		pasts = append(pasts, p)
	}
	removed := pruneJournals(live, 2, 30*24*time.Hour, now)
	if len(removed) != 2 || !contains(removed, pasts[2]) || !contains(removed, pasts[3]) {
		t.Fatalf("removed %v, want the 3rd newest (count) and the 40-day-old (age)", removed)
	}
	for _, p := range []string{live, other, asideOther, pasts[0], pasts[1]} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was pruned: %v", filepath.Base(p), err)
		}
	}
	if removed := pruneJournals(live, 0, 0, now); len(removed) != 2 {
		t.Fatalf("keep = 0 removed %v", removed)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// BenchmarkReplay200Turns replays a 200-turn journal (each answer
// streamed in 200 chunks, journaled coalesced) through a fresh machine:
// the part of a resume that grows with the conversation.
func BenchmarkReplay200Turns(b *testing.B) {
	path := filepath.Join(b.TempDir(), "j.jsonl")
	writeConversation(b, path, "/w", 200, 200)
	b.ReportAllocs()
	for b.Loop() {
		rp, err := journal.Replay(path, fsm.Config{})
		if err != nil || len(rp.M.Messages()) != 400 {
			b.Fatalf("replayed %d messages: %v", len(rp.M.Messages()), err)
		}
	}
}

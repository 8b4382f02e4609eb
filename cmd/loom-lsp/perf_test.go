package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// The performance figures of issue 37, measured on the built binary as a
// user runs it: nothing but the model on the critical path (start → first
// model request, with and without the server's answers remembered; ACP
// session/new against the bare SDK agent), and memory (an exec session's
// peak RSS, an idle serve's processes).

// memoryTarget is the most an exec session's peak RSS, and an idle serve's
// process, should hold; the checks fail past twice that (exec) or past it
// (an idle serve, whose start-up pages are given back).
const memoryTarget = 25 << 20

// discoveryServer is a model server whose discovery paths (/v1/models,
// /props, /api/show, …) answer slowly: after probeDelay, or, when block is
// set, only once the first chat request came (a client that waited for
// them would never send it). /props tells an 8,192-token window; the
// others answer 404. Chat requests are answered at once: a read_file call
// for a prompt, then a short answer.
type discoveryServer struct {
	*httptest.Server
	probeDelay time.Duration
	block      bool

	mu        sync.Mutex
	firstChat time.Time
	before    []string // discovery paths asked before the first chat request
	chat      chan struct{}
	// abandoned counts the discovery requests the client gave up on
	// before the first chat request came; gaveUp is its value then.
	abandoned, gaveUp int
}

func newDiscoveryServer(tb testing.TB, probeDelay time.Duration, block bool) *discoveryServer {
	s := &discoveryServer{probeDelay: probeDelay, block: block, chat: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// reset forgets the first chat request, for the next run.
func (s *discoveryServer) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.firstChat, s.before, s.chat = time.Time{}, nil, make(chan struct{})
	s.abandoned, s.gaveUp = 0, 0
}

func (s *discoveryServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	chat := s.chat
	if r.URL.Path == "/v1/chat/completions" {
		if s.firstChat.IsZero() {
			s.firstChat, s.gaveUp = time.Now(), s.abandoned
			close(s.chat)
		}
	} else if s.firstChat.IsZero() {
		s.before = append(s.before, r.URL.Path)
	}
	s.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" {
		if s.block {
			select {
			case <-chat:
			case <-time.After(20 * time.Second):
			case <-r.Context().Done():
				s.mu.Lock()
				s.abandoned++
				s.mu.Unlock()
				return
			}
		} else {
			time.Sleep(s.probeDelay) // the server's own slowness, not a wait for anything
		}
		if r.URL.Path == "/props" {
			io.WriteString(w, `{"default_generation_settings":{"n_ctx":8192}}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta string) {
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":`+delta+`,"finish_reason":null}]}`+"\n\n")
	}
	if !strings.Contains(string(body), `"role":"tool"`) {
		for i := range 20 {
			chunk(fmt.Sprintf(`{"content":"word%d "}`, i))
		}
		chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"greet.txt\"}"}}]}`)
	} else {
		for i := range 20 {
			chunk(fmt.Sprintf(`{"content":"answer%d "}`, i))
		}
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

// execFigures is what execOnce measured.
type execFigures struct {
	// toFirst is how long the first chat request took to come after the
	// process started.
	toFirst time.Duration
	// peak is the session's peak RSS in bytes, when asked for.
	peak int64
}

// execOnce runs one exec session of bin against srv with the state
// directory state; with peak set, through the maxrss tool, to read its
// peak RSS.
func execOnce(tb testing.TB, bin, dir, state string, srv *discoveryServer, peak bool) execFigures {
	tb.Helper()
	srv.reset()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{bin, "exec", "--base-url", srv.URL + "/v1", "--model", "m", "read greet.txt"}
	rssFile := filepath.Join(tb.TempDir(), "maxrss")
	if peak {
		args = append([]string{testTool(tb, "maxrss"), rssFile}, args...)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	env := isolatedEnv(tb)
	cmd.Env = append(env[:len(env)-1], "XDG_STATE_HOME="+state)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	if err := cmd.Run(); err != nil {
		tb.Fatalf("exec: %v", err)
	}
	var run execFigures
	if peak {
		b, err := os.ReadFile(rssFile)
		kb, err2 := strconv.ParseInt(string(b), 10, 64)
		if err != nil || err2 != nil {
			tb.Fatalf("no peak RSS: %v %v", err, err2)
		}
		run.peak = kb << 10
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.firstChat.IsZero() {
		tb.Fatal("no chat request")
	}
	run.toFirst = srv.firstChat.Sub(start)
	return run
}

var (
	toolsMu sync.Mutex
	tools   = map[string]string{}
)

// testTool builds the program testdata/name once per test binary and
// returns its path.
func testTool(tb testing.TB, name string) string {
	tb.Helper()
	toolsMu.Lock()
	defer toolsMu.Unlock()
	if p, ok := tools[name]; ok {
		return p
	}
	p := filepath.Join(filepath.Dir(loomBinary), name)
	if out, err := exec.Command("go", "build", "-o", p, "./testdata/"+name).CombinedOutput(); err != nil {
		tb.Fatalf("build testdata/%s: %v\n%s", name, err, out)
	}
	tools[name] = p
	return p
}

// TestFirstRequestDoesNotWaitForDiscovery: the server answers no
// discovery question until it got the first chat request, and exec sends
// it without giving up on any of them first (a client that waited for
// them would send it only after abandoning them at its probes' 5 s
// bound). The next start, with the answers remembered in the state
// directory, asks no discovery question before its first request.
func TestFirstRequestDoesNotWaitForDiscovery(t *testing.T) {
	srv := newDiscoveryServer(t, 0, true)
	dir, state := testRepo(t), t.TempDir()
	took := execOnce(t, loomBinary, dir, state, srv, false).toFirst
	srv.mu.Lock()
	t.Logf("first start: first request after %v; asked before it: %v", took, srv.before)
	if srv.gaveUp > 0 {
		t.Errorf("the client gave up on %d discovery requests before its first chat request: it waited for discovery", srv.gaveUp)
	}
	srv.mu.Unlock()
	b, err := os.ReadFile(filepath.Join(state, "loom", "servers.json"))
	if err != nil || !strings.Contains(string(b), "/api/show") || !strings.Contains(string(b), "8192") {
		t.Fatalf("the server's answers were not remembered: %s %v", b, err)
	}
	took = execOnce(t, loomBinary, dir, state, srv, false).toFirst
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.before) != 0 {
		t.Errorf("second start asked %v before its first request; want nothing (remembered)", srv.before)
	}
	t.Logf("second start: first request after %v", took)
}

// BenchmarkStartToFirstRequest measures `loom-lsp exec` from its start to
// the server's receipt of its first chat request, against a local server
// whose discovery paths each take 100 ms to answer: "cold" (nothing
// remembered: a new state directory per run) and "cached" (the server's
// answers remembered), and the ratio cached/cold.
func BenchmarkStartToFirstRequest(b *testing.B) {
	srv := newDiscoveryServer(b, 100*time.Millisecond, false)
	dir := gitRepoB(b)
	// Remember the answers: a run whose turn outlasts the discovery (a
	// server that answers the probes at once, here).
	primed := b.TempDir()
	srv.probeDelay = 0
	execOnce(b, loomBinary, dir, primed, srv, false)
	srv.probeDelay = 100 * time.Millisecond
	remembered, err := os.ReadFile(filepath.Join(primed, "loom", "servers.json"))
	if err != nil {
		b.Fatal(err)
	}
	var cold time.Duration
	for _, mode := range []string{"cold", "cached"} {
		b.Run(mode, func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				// A new state directory each run (no journals of earlier
				// runs), holding the remembered answers when cached.
				state := b.TempDir()
				if mode == "cached" {
					os.MkdirAll(filepath.Join(state, "loom"), 0o700)
					os.WriteFile(filepath.Join(state, "loom", "servers.json"), remembered, 0o600)
				}
				total += execOnce(b, loomBinary, dir, state, srv, false).toFirst
			}
			avg := total / time.Duration(b.N)
			b.ReportMetric(float64(avg.Microseconds())/1000, "ms-to-first-request")
			if mode == "cold" {
				cold = avg
			} else if cold > 0 {
				b.ReportMetric(float64(avg)/float64(cold), "cached/cold")
			}
		})
	}
}

// gitRepoB is testRepo for a benchmark.
func gitRepoB(b *testing.B) string {
	dir := b.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "i", "--allow-empty"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// copiedBinary copies bin to a new file with small writes (as cp or an
// installer does; `go install` does not: it renames the linker's file).
// Why it matters: the Go linker writes its output through a shared
// mapping, and on Linux 6.18 with ext4 that file's page cache is made of
// 2 MiB folios, which the kernel maps whole on a fault (PMD-mapped, or
// PTE-mapped under MADV_NOHUGEPAGE: the same), so every 2 MiB of the
// binary the process touches counts in its RSS: an exec session peaks at
// ~42 MiB. The copy's page cache is in small folios (~24 MiB), and so is
// the linked file itself once its page cache was written back and dropped
// (memory pressure, a reboot) and read again from disk. The process's own
// memory (RssAnon ~2.3 MiB; no GC cycle in an exec session) is the same.
func copiedBinary(tb testing.TB, bin string) string {
	tb.Helper()
	dst := filepath.Join(tb.TempDir(), "loom-lsp")
	in, err := os.Open(bin)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		tb.Fatal(err)
	}
	buf := make([]byte, 4096)
	if _, err := io.CopyBuffer(struct{ io.Writer }{out}, struct{ io.Reader }{in}, buf); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
	return dst
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// TestExecPeakRSS is the check that the next memory regression is seen:
// an exec session (a tool call and two streamed answers) peaks under
// twice the 25 MiB target, with the binary as linked and as installed.
func TestExecPeakRSS(t *testing.T) {
	srv := newDiscoveryServer(t, 0, false)
	dir := testRepo(t)
	for _, c := range []struct{ name, bin string }{{"as linked", loomBinary}, {"as installed (copied)", copiedBinary(t, loomBinary)}} {
		peak := execOnce(t, c.bin, dir, t.TempDir(), srv, true).peak
		t.Logf("exec session, binary %s: peak RSS %s (target %s)", c.name, mib(peak), mib(memoryTarget))
		if peak > 2*memoryTarget {
			t.Errorf("exec session, binary %s: peak RSS %s, over twice the %s target", c.name, mib(peak), mib(memoryTarget))
		}
	}
}

// BenchmarkExecRSS reports an exec session's peak RSS (the ru_maxrss of
// the child, read by testdata/maxrss), with the binary as linked and as
// installed.
func BenchmarkExecRSS(b *testing.B) {
	srv := newDiscoveryServer(b, 0, false)
	dir := gitRepoB(b)
	for _, c := range []struct{ name, bin string }{{"linked", loomBinary}, {"installed", copiedBinary(b, loomBinary)}} {
		b.Run(c.name, func(b *testing.B) {
			var peak int64
			for b.Loop() {
				peak = max(peak, execOnce(b, c.bin, dir, b.TempDir(), srv, true).peak)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
		})
	}
}

// procStatus reads fields of /proc/PID/status, in kB.
func procStatus(pid int) map[string]int64 {
	out := map[string]int64{}
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err == nil {
			out[k] = n << 10
		}
	}
	return out
}

// childrenOf lists a process's children (those of each of its threads).
func childrenOf(pid int) []int {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, file := range files {
		b, _ := os.ReadFile(file)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// TestIdleServeMemory: an idle `loom-lsp serve` with two folders holds at
// most 25 MiB per process (the daemon and its watchdog: resident set),
// 40 MiB together, once it has been left alone (it gives back the pages
// of its binary that starting mapped once its protocol stream is quiet). Together is the sum of the processes'
// proportional sets (Pss): the two run one binary, and the summed resident
// sets count each page of it both share twice — with a freshly linked
// binary, whose page cache is in 2 MiB folios mapped whole, that double
// count alone moved the sum between 30 and 40 MiB from one run to the
// next.
func TestIdleServeMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the daemon's start to be over")
	}
	srv := newDiscoveryServer(t, 0, false)
	a, b := testRepo(t), testRepo(t)
	c := startServer(t, loomBinary)
	in := bufio.NewReader(c.conn)
	opts, _ := json.Marshal(map[string]any{"model": map[string]any{"base_url": srv.URL + "/v1", "name": "m"}})
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":%q,"capabilities":{"experimental":{"loom":{}}},"workspaceFolders":[{"uri":%q,"name":"a"},{"uri":%q,"name":"b"}],"initializationOptions":%s}}`,
		"file://"+a, "file://"+a, "file://"+b, opts)
	if _, err := io.WriteString(c.conn, lspFrame(init)+lspFrame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)); err != nil {
		t.Fatal(err)
	}
	awaitResponse(t, in, 1)
	go io.Copy(io.Discard, in)
	pid := c.cmd.Process.Pid
	// The daemon gives back its start-up pages once its protocol stream
	// has been quiet releaseImageAfter, and once more releaseImageLater
	// after that (for what the start's tail mapped): left alone, it must
	// come under the target by then. Wait for its resident memory to
	// fall, and then to be under the target, with a deadline past both.
	began := time.Now()
	deadline := began.Add(releaseImageAfter + releaseImageLater + 30*time.Second)
	st := procStatus(pid)
	for (st["VmRSS"] > st["VmHWM"]*4/5 || st["VmRSS"] > memoryTarget) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // polling the kernel's figures, with a deadline
		st = procStatus(pid)
	}
	t.Logf("left alone for %v", time.Since(began).Round(100*time.Millisecond))
	total, rss := procPss(t, pid), st["VmRSS"]
	t.Logf("idle serve, 2 folders: daemon RSS %s, Pss %s (peak RSS %s, anonymous %s)", mib(st["VmRSS"]), mib(total), mib(st["VmHWM"]), mib(st["RssAnon"]))
	if st["VmRSS"] > memoryTarget {
		t.Errorf("the idle daemon holds %s, over %s", mib(st["VmRSS"]), mib(memoryTarget))
	}
	for _, kid := range childrenOf(pid) {
		ks := procStatus(kid)
		pss := procPss(t, kid)
		total += pss
		rss += ks["VmRSS"]
		t.Logf("its child %d: RSS %s, Pss %s", kid, mib(ks["VmRSS"]), mib(pss))
		if ks["VmRSS"] > memoryTarget {
			t.Errorf("the daemon's child %d holds %s, over %s", kid, mib(ks["VmRSS"]), mib(memoryTarget))
		}
	}
	t.Logf("process tree: Pss %s (resident sets summed: %s)", mib(total), mib(rss))
	if total > 40<<20 {
		t.Errorf("the idle process tree holds %s, over 40 MiB", mib(total))
	}
}

// procPss is a process's proportional set size: its resident pages, each
// shared page divided by the number of processes that map it.
func procPss(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		t.Fatalf("the proportional set of %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("smaps_rollup of %d: %q", pid, line)
			}
			return n << 10
		}
	}
	t.Fatalf("smaps_rollup of %d has no Pss", pid)
	return 0
}

// BenchmarkACPSessionNew measures session/new, loom against the bare ACP
// Go SDK agent (testdata/bareagent: the floor), with a model server that
// takes 100 ms to list its models (loom must not wait for it), and
// reports the ratio loom/bare.
func BenchmarkACPSessionNew(b *testing.B) {
	bare := testTool(b, "bareagent")
	srv := newDiscoveryServer(b, 100*time.Millisecond, false)
	dir := gitRepoB(b)
	var floor time.Duration
	for _, c := range []struct {
		name string
		bin  string
		args []string
	}{{"bare-sdk", bare, nil}, {"loom", loomBinary, []string{"acp", "--base-url", srv.URL + "/v1", "--model", "m"}}} {
		b.Run(c.name, func(b *testing.B) {
			p := startAgent(b, dir, isolatedEnv(b), c.bin, c.args...)
			ctx := context.Background()
			p.initialize(b, ctx)
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := p.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}}); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
			}
			avg := total / time.Duration(b.N)
			b.ReportMetric(float64(avg.Microseconds())/1000, "ms/session-new")
			if c.name == "bare-sdk" {
				floor = avg
			} else if floor > 0 {
				b.ReportMetric(float64(avg)/float64(floor), "loom/bare")
			}
		})
	}
}

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A key kept in model.headers (Azure's api-key, Anthropic-style x-api-key
// behind a proxy, a gateway's token): a 401 body that echoes it is shown
// to nobody — not exec's JSONL, its log, nor the journal.
func TestExecRedactsAnEchoedHeaderKey(t *testing.T) {
	key := "azkey-echo-0123456789abcdef"
	var got atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("api-key")
		if h == key {
			got.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Access denied due to invalid subscription key %s","type":"invalid_request_error","code":"401"}}`, h)
	}))
	t.Cleanup(srv.Close)
	dir, env := testRepo(t), isolatedEnv(t)
	env = append(env, "OPENAI_API_KEY=unused-placeholder-key")
	cfg := filepath.Join(t.TempDir(), "loom.toml")
	if err := os.WriteFile(cfg, []byte("[model.headers]\napi-key = \""+key+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--verbose", "--base-url", srv.URL+"/v1", "--model", "m", "--config", cfg, "hi")
	if got.Load() == 0 {
		t.Fatalf("the server never received the header, so this test proves nothing; exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "invalid subscription key [REDACTED]") {
		t.Errorf("the 401 is not reported (redacted) in the JSONL:\n%s", r.stdout)
	}
	for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
		if strings.Contains(out, key) {
			t.Errorf("%s shows the header's key:\n%s", name, out)
		}
	}
	if n := grepTree(t, envDir(env, "XDG_STATE_HOME"), key); n == 0 {
		t.Errorf("no journal written under %s", envDir(env, "XDG_STATE_HOME"))
	}
}

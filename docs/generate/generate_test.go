package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
)

func root(t *testing.T) string {
	t.Helper()
	r, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGeneratedPagesUpToDate fails when a generated page differs from
// what the generator writes now: a loom.toml key, a doc comment or an
// exec event was added or changed without `go generate ./docs/...`.
func TestGeneratedPagesUpToDate(t *testing.T) {
	r := root(t)
	for _, p := range pages {
		want, err := p.render(r)
		if err != nil {
			t.Fatalf("%s: %v", p.path, err)
		}
		got, err := os.ReadFile(filepath.Join(r, p.path))
		if err != nil {
			t.Fatalf("%s: %v (run go generate ./docs/...)", p.path, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is out of date: run go generate ./docs/... (first difference at line %d)", p.path, firstDiffLine(got, want))
		}
	}
}

func firstDiffLine(a, b []byte) int {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// TestEveryEventInSchema: every event type the Go code writes has a
// definition in schema.json (and so a section of the page), and the
// schema has no event the code no longer writes.
func TestEveryEventInSchema(t *testing.T) {
	r := root(t)
	code, err := goEventTypes(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(code) < 10 {
		t.Fatalf("found only %d event types in the Go code (%v): the scan is broken", len(code), code)
	}
	events, _, err := readSchema(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range code {
		if !slices.Contains(events, e) {
			t.Errorf("the Go code writes event %q, which %s does not define: add it there and run go generate ./docs/...", e, schemaPath)
		}
	}
	for _, e := range events {
		if !slices.Contains(code, e) {
			t.Errorf("%s defines event %q, which no Go code writes", schemaPath, e)
		}
	}
}

// TestEventFieldsInSchema: every JSON field of headless.Event is a
// property of at least one event of the schema.
func TestEventFieldsInSchema(t *testing.T) {
	events, defs, err := readSchema(root(t))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range events {
		for _, p := range defs[e].props {
			have[p.name] = true
		}
	}
	fields, err := eventJSONFields(root(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(fields) < 20 {
		t.Fatalf("found only %d fields of headless.Event: the scan is broken", len(fields))
	}
	for _, f := range fields {
		if !have[f] {
			t.Errorf("headless.Event has field %q, which no event of %s has: describe it there and run go generate ./docs/...", f, schemaPath)
		}
	}
}

// TestConfigKeysDocumented: every loom.toml key has a doc comment, so
// its line of the reference says what it does.
func TestConfigKeysDocumented(t *testing.T) {
	secs, err := loadConfigSections(root(t))
	if err != nil {
		t.Fatal(err)
	}
	keys := sortedKeys(secs)
	if len(keys) < 40 {
		t.Fatalf("found only %d keys: the walk is broken", len(keys))
	}
	for _, s := range secs {
		if s.doc == "" {
			t.Errorf("[%s]: its type has no doc comment", s.name)
		}
		for _, k := range s.keys {
			if k.doc == "" {
				t.Errorf("%s: its field has no doc comment", k.key)
			}
		}
	}
}

// TestWideningColumn: the page's widening column, read from
// config.WideningKeys, agrees with config.WideningKey, which the loader
// applies: a key that widens for some value is marked, and every entry
// of WideningKeys names a key that exists.
func TestWideningColumn(t *testing.T) {
	secs, err := loadConfigSections(root(t))
	if err != nil {
		t.Fatal(err)
	}
	probes := []any{"allow", "ask", "deny", "auto", "review", "off", "on", "read-only", "workspace", "x",
		[]any{"localhost:1"}, []any{}, true, false, int64(1), 1.0, map[string]any{}}
	var keys []string
	for _, s := range secs {
		for _, k := range s.keys {
			keys = append(keys, k.key)
			if s.name == "trust" {
				continue // read from the user's own file only
			}
			concrete := strings.ReplaceAll(k.key, "NAME", "x")
			for _, v := range probes {
				if config.WideningKey(concrete, v) && k.widening == "" {
					t.Errorf("%s = %v widens (config.WideningKey) but config.WideningKeys does not list it", k.key, v)
					break
				}
			}
		}
	}
	for _, w := range config.WideningKeys() {
		name, _, _ := strings.Cut(w, " ")
		table, isTable := strings.CutSuffix(name, ".*")
		if !slices.ContainsFunc(keys, func(k string) bool {
			return k == name || (isTable && (k == table || strings.HasPrefix(k, table+".")))
		}) {
			t.Errorf("config.WideningKeys lists %q, which is no key of loom.toml", w)
		}
	}
}

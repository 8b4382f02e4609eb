package agenthooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInputJSONGolden: every event's input in every format, byte for
// byte as testdata/input_json.golden holds it (written from the code
// before Input.JSON was split; LOOM_UPDATE_GOLDEN=1 rewrites it).
func TestInputJSONGolden(t *testing.T) {
	var b strings.Builder
	for _, f := range []Format{FormatClaude, FormatCodex, FormatVSCode, FormatCopilot, FormatLoom} {
		for _, ev := range Events {
			for _, failed := range []bool{false, true} {
				in := Input{
					SessionID: "s1", TranscriptPath: "/state/s1.jsonl", Cwd: "/work/p", Event: ev,
					Tool: "edit_file", ToolInput: json.RawMessage(`{"path":"a/b.go","old_string":"x"}`), ToolUseID: "c1",
					ToolOutput: "edited a/b.go", ToolFailed: failed, Prompt: "fix it", StopHookActive: failed,
					LastMessage: "done", Source: map[bool]string{false: "clear", true: "resume"}[failed], Message: "waiting",
					Now: time.Date(2026, 12, 7, 21, 0, 0, 5, time.UTC),
				}
				b.WriteString(string(f) + " " + string(ev) + " " + map[bool]string{false: "ok", true: "failed"}[failed] + "\n")
				b.Write(in.JSON(&Hook{Event: ev, Format: f}))
				b.WriteString("\n")
			}
		}
	}
	golden := filepath.Join("testdata", "input_json.golden")
	if os.Getenv("LOOM_UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		got, wantLines := strings.Split(b.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(got), len(wantLines)) {
			if got[i] != wantLines[i] {
				t.Fatalf("line %d:\n got %s\nwant %s", i+1, got[i], wantLines[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(got), len(wantLines))
	}
}

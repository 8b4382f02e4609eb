package journal

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// TestReadInfoPromptsAndMeta: without its meta file a journal's listing
// counts its prompts, the first one the title, past a torn last line;
// with it, the meta file's title, turns and later update win.
func TestReadInfoPromptsAndMeta(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := Create(path, "/folder", time.Unix(100, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []fsm.Event{fsm.UserInput{Text: "fix the parser\nplease"}, fsm.UserInput{Text: "and its tests"}} {
		if err := j.AppendEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"t":"UserInput","e":{"text":"torn`)
	f.Close()

	c, err := ReadInfo(path, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Turns != 2 || c.Title != Title(nil, "fix the parser\nplease") || c.Folder != "/folder" || c.Path != path {
		t.Fatalf("from its prompts: %+v", c)
	}

	later := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	if err := os.WriteFile(MetaPath(path), []byte(`{"title":"renamed","turns":7,"updated":"`+later.Format(time.RFC3339)+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = ReadInfo(path, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Turns != 7 || c.Title != "renamed" || !c.Updated.Equal(later) {
		t.Fatalf("from its meta file: %+v", c)
	}
	if c, _ := ReadInfo(path, false, nil); c.Turns != 2 {
		t.Fatalf("useMeta false read the meta file: %+v", c)
	}
	if err := os.WriteFile(MetaPath(path), []byte(`not json`), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, _ := ReadInfo(path, true, nil); c.Turns != 2 || c.Title != Title(nil, "fix the parser\nplease") {
		t.Fatalf("a broken meta file: %+v", c)
	}
}

package journal

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/secret"
)

// Info describes one journaled conversation of a workspace folder, as
// the conversation lists show it.
type Info struct {
	// ID is stable for the conversation's whole life, across restarts of
	// the process: it is derived from the journal's header (its folder
	// and creation time), which renames do not change. It is "" for a
	// conversation that is not journaled.
	ID      string
	Folder  string
	Created time.Time
	// Updated is the time of the journal's last write.
	Updated time.Time
	// Title is the title set by a rename, else the first line of the
	// conversation's first prompt, cut to 80 characters; "" when it has
	// no prompt yet.
	Title string
	// Turns counts the conversation's prompts.
	Turns int
	// Usage is the conversation's token usage, as of its last turn.
	Usage fsm.Usage
	// Live marks a conversation open in this process.
	Live bool
	// Elsewhere marks a conversation open in another loom-lsp process:
	// read-only here.
	Elsewhere bool
	// Path is the journal's file.
	Path string `json:"-"`
}

// Meta is what a journal's meta file (MetaPath) keeps for
// the conversation lists, written at turn boundaries and on a rename.
type Meta struct {
	Title string    `json:"title"`
	Named bool      `json:"named,omitempty"`
	Turns int       `json:"turns"`
	Usage fsm.Usage `json:"usage"`
	// Updated is the time of the conversation's last turn boundary (the
	// journal's modification time is too coarse to order two
	// conversations of one second).
	Updated time.Time `json:"updated"`
}

// MetaPath is the meta file of the journal at path.
func MetaPath(path string) string {
	return strings.TrimSuffix(path, ".jsonl") + ".meta.json"
}

// ID derives a conversation's id from its journal's header.
func ID(folder string, created time.Time) string {
	sum := sha256.Sum256([]byte(folder + "\x00" + created.UTC().Format(time.RFC3339Nano)))
	return "loom-" + hex.EncodeToString(sum[:10])
}

// ReadInfo reads a journal's header, and its meta file when
// useMeta, else its prompts. The title is masked by r, as shown text is
// (a key pasted in a first prompt, a meta file of an older loom-lsp).
func ReadInfo(path string, useMeta bool, r *secret.Redactor) (Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Info{}, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	line, err := br.ReadBytes('\n')
	if err != nil {
		return Info{}, fmt.Errorf("%s: no header: %w", path, err)
	}
	var h Header
	if err := json.Unmarshal(line, &h); err != nil || h.Journal != Magic || h.Version != Version {
		return Info{}, fmt.Errorf("%s: %w", path, ErrIncompatible)
	}
	c := Info{ID: ID(h.Folder, h.Created), Folder: h.Folder, Created: h.Created, Updated: st.ModTime(), Path: path}
	if useMeta && c.readMeta(r) {
		return c, nil
	}
	c.countPrompts(br, r)
	return c, nil
}

// readMeta takes the title, turns, usage and a later update from the
// journal's meta file; false when there is none or it cannot be read.
func (c *Info) readMeta(r *secret.Redactor) bool {
	b, err := os.ReadFile(MetaPath(c.Path))
	if err != nil {
		return false
	}
	var m Meta
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	c.Title, c.Turns, c.Usage = r.String(m.Title), m.Turns, m.Usage
	if m.Updated.After(c.Updated) {
		c.Updated = m.Updated
	}
	return true
}

// countPrompts reads the records after the header: each prompt is a
// turn, the first one the title. It stops at the end or a torn line.
func (c *Info) countPrompts(br *bufio.Reader, r *secret.Redactor) {
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return // the end, or a torn last line
		}
		var rec Record
		if json.Unmarshal(line, &rec) != nil || rec.Type != "UserInput" {
			continue
		}
		c.Turns++
		var in fsm.UserInput
		if c.Title == "" && json.Unmarshal(rec.Event, &in) == nil {
			c.Title = Title(r, in.Text)
		}
	}
}

// Title is the title a prompt (or a rename) gives: its first
// line, at most 80 runes, masked as shown text is. It is masked before
// it is cut, so that no cut leaves a piece of a secret the mask no
// longer recognises.
func Title(r *secret.Redactor, prompt string) string {
	title, _, _ := strings.Cut(strings.TrimSpace(r.String(prompt)), "\n")
	if r := []rune(title); len(r) > 80 {
		title = string(r[:80]) + "…"
	}
	return title
}

// WriteMeta replaces the meta file of the journal at path.
func WriteMeta(path string, m Meta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp := MetaPath(path) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, MetaPath(path))
}

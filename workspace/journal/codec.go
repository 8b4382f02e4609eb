package journal

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// The journal is a JSONL file per workspace folder, in the user's state
// directory ($XDG_STATE_HOME/loom, else ~/.local/state/loom; never in the
// repository). Its first line is a header:
//
//	{"journal":"loom-lsp","version":1,"folder":"/abs/folder","created":"2026-01-02T15:04:05Z"}
//
// (folder and creation time give the conversation its id, see
// ID)
// and every other line is one record: the machine configuration the
// following events were stepped under, or one event the session's machine
// accepted, tagged with its type:
//
//	{"t":"config","config":{"SystemPrompt":"…","Tools":{…},…}}
//	{"t":"UserInput","e":{"Text":"fix the bug"}}
//
// Each record is written with a single write(2), so a killed daemon loses
// nothing it stepped (at worst the line being written is torn), except the
// text of a message still streaming: a message's text deltas are kept in
// memory and written as one LlmTextDelta record just before the next other
// event (the LlmCompleted that ends the message, a tool call, an error, a
// cancel), so a turn's text is stored once, not one line per chunk, and a
// completed message is never lost. The file is fsynced at turn boundaries. Events hold the conversation only: API keys
// live in the environment and never reach the machine.

// Version is the version of the journal format. A journal of
// another version is renamed aside, not read.
const Version = 1

// Magic is the header's "journal" value.
const Magic = "loom-lsp"

type Header struct {
	Journal string    `json:"journal"`
	Version int       `json:"version"`
	Folder  string    `json:"folder"`
	Created time.Time `json:"created"`
}

// UnjournaledID returns a random id for a conversation that
// is not journaled, in the form of ID's.
func UnjournaledID() string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return "loom-" + hex.EncodeToString(b[:])
}

// Record is one line after the header. Type is "config" (Config is
// set) or the name of an fsm event type (Event holds it).
type Record struct {
	Type   string          `json:"t"`
	Event  json.RawMessage `json:"e,omitempty"`
	Config *fsm.Config     `json:"config,omitempty"`
	// Commit is set for "commit" and "commit-end" (commitjournal.go).
	Commit *CommitRecord `json:"commit,omitempty"`
	// Restore is set for "restore" and "restore-end" (restores.go).
	Restore *RestoreRecord `json:"restore,omitempty"`
}

// decoders are the events the journal keeps, by tag (the fsm type's
// name). ShutdownRequested is not journaled (stopping the daemon is not
// part of the conversation), nor LlmReasoningDelta (the model's reasoning
// changes nothing in the machine, is never sent back to the model, and
// would only make the journal larger).
var decoders = map[string]func(json.RawMessage) (fsm.Event, error){
	"UserInput":              decodeAs[fsm.UserInput],
	"LlmTextDelta":           decodeAs[fsm.LlmTextDelta],
	"LlmToolCallDelta":       decodeAs[fsm.LlmToolCallDelta],
	"LlmCompleted":           decodeAs[fsm.LlmCompleted],
	"LlmError":               decodeAs[fsm.LlmError],
	"ToolProgress":           decodeAs[fsm.ToolProgress],
	"ToolCompleted":          decodeAs[fsm.ToolCompleted],
	"PostToolsHookCompleted": decodeAs[fsm.PostToolsHookCompleted],
	"RetryTimeoutFired":      decodeAs[fsm.RetryTimeoutFired],
	"Cancel":                 decodeAs[fsm.Cancel],
	"FilesChanged":           decodeAs[fsm.FilesChanged],
	"Reset":                  decodeAs[fsm.Reset],
	"DropQueued":             decodeAs[fsm.DropQueued],
	"ApprovalDecided":        decodeAs[fsm.ApprovalDecided],
	"Elicited":               decodeAs[fsm.Elicited],
	"HooksDecided":           decodeAs[fsm.HooksDecided],
	"Compact":                decodeAs[fsm.Compact],
	"AdvanceIDs":             decodeAs[fsm.AdvanceIDs],
	"Load":                   decodeAs[fsm.Load],
	"ChangesProposed":        decodeAs[fsm.ChangesProposed],
	"ChangesDecided":         decodeAs[fsm.ChangesDecided],
	"Rewind":                 decodeAs[fsm.Rewind],
	"Redo":                   decodeAs[fsm.Redo],
	"SelectModel":            decodeAs[fsm.SelectModel],
	"SelectEffort":           decodeAs[fsm.SelectEffort],
	"SetMode":                decodeAs[fsm.SetMode],
	"PlanDecided":            decodeAs[fsm.PlanDecided],
	"SpawnRequested":         decodeAs[fsm.SpawnRequested],
	"ChildUsage":             decodeAs[fsm.ChildUsage],
	"ChildTimedOut":          decodeAs[fsm.ChildTimedOut],
	"ChildStopAsked":         decodeAs[fsm.ChildStopAsked],
	"ChildFinished":          decodeAs[fsm.ChildFinished],
}

// tags is decoders read backwards: the tag of each journaled event type.
var tags = func() map[reflect.Type]string {
	m := make(map[reflect.Type]string, len(decoders))
	for tag, decode := range decoders {
		zero, _ := decode(nil)
		m[reflect.TypeOf(zero)] = tag
	}
	return m
}()

// Tag returns the journal type tag of ev, "" for an event that is not
// journaled (see decoders).
func Tag(ev fsm.Event) string {
	return tags[reflect.TypeOf(ev)]
}

func decodeAs[T fsm.Event](raw json.RawMessage) (fsm.Event, error) {
	var ev T
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// DecodeEvent is the inverse of encoding an event under Tag.
func DecodeEvent(tag string, raw json.RawMessage) (fsm.Event, error) {
	if ev, ok := decodeTextEvent(tag, raw); ok {
		return ev, nil
	}
	decode, ok := decoders[tag]
	if !ok {
		return nil, fmt.Errorf("unknown event type %q", tag)
	}
	return decode(raw)
}

// DefaultStateDir is $XDG_STATE_HOME/loom, else ~/.local/state/loom.
func DefaultStateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "loom"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "loom"), nil
}

// Path names the journal of folder in dir: the folder's base name,
// made safe, and a short hash of its full path, so that two folders with
// the same name do not share a journal.
func Path(dir, folder string) string {
	sum := sha256.Sum256([]byte(folder))
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, filepath.Base(folder))
	name = strings.TrimLeft(name, ".")
	if len(name) > 48 {
		name = name[:48]
	}
	if name == "" {
		name = "root"
	}
	return filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:6])+".jsonl")
}

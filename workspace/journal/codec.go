package journal

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// Tag returns the journal type tag of ev, "" for an event that is not
// journaled (ShutdownRequested: stopping the daemon is not part of the
// conversation; LlmReasoningDelta: the model's reasoning changes nothing
// in the machine, is never sent back to the model, and would only make
// the journal larger).
func Tag(ev fsm.Event) string {
	switch ev.(type) {
	case fsm.UserInput:
		return "UserInput"
	case fsm.LlmTextDelta:
		return "LlmTextDelta"
	case fsm.LlmToolCallDelta:
		return "LlmToolCallDelta"
	case fsm.LlmCompleted:
		return "LlmCompleted"
	case fsm.LlmError:
		return "LlmError"
	case fsm.ToolProgress:
		return "ToolProgress"
	case fsm.ToolCompleted:
		return "ToolCompleted"
	case fsm.PostToolsHookCompleted:
		return "PostToolsHookCompleted"
	case fsm.RetryTimeoutFired:
		return "RetryTimeoutFired"
	case fsm.Cancel:
		return "Cancel"
	case fsm.FilesChanged:
		return "FilesChanged"
	case fsm.Reset:
		return "Reset"
	case fsm.DropQueued:
		return "DropQueued"
	case fsm.ApprovalDecided:
		return "ApprovalDecided"
	case fsm.HooksDecided:
		return "HooksDecided"
	case fsm.Compact:
		return "Compact"
	case fsm.AdvanceIDs:
		return "AdvanceIDs"
	case fsm.Load:
		return "Load"
	case fsm.ChangesProposed:
		return "ChangesProposed"
	case fsm.ChangesDecided:
		return "ChangesDecided"
	case fsm.Rewind:
		return "Rewind"
	case fsm.Redo:
		return "Redo"
	case fsm.SelectModel:
		return "SelectModel"
	case fsm.SelectEffort:
		return "SelectEffort"
	case fsm.SetMode:
		return "SetMode"
	case fsm.PlanDecided:
		return "PlanDecided"
	case fsm.SpawnRequested:
		return "SpawnRequested"
	case fsm.ChildUsage:
		return "ChildUsage"
	case fsm.ChildTimedOut:
		return "ChildTimedOut"
	case fsm.ChildFinished:
		return "ChildFinished"
	}
	return ""
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
	switch tag {
	case "UserInput":
		return decodeAs[fsm.UserInput](raw)
	case "LlmTextDelta":
		return decodeAs[fsm.LlmTextDelta](raw)
	case "LlmToolCallDelta":
		return decodeAs[fsm.LlmToolCallDelta](raw)
	case "LlmCompleted":
		return decodeAs[fsm.LlmCompleted](raw)
	case "LlmError":
		return decodeAs[fsm.LlmError](raw)
	case "ToolProgress":
		return decodeAs[fsm.ToolProgress](raw)
	case "ToolCompleted":
		return decodeAs[fsm.ToolCompleted](raw)
	case "PostToolsHookCompleted":
		return decodeAs[fsm.PostToolsHookCompleted](raw)
	case "RetryTimeoutFired":
		return decodeAs[fsm.RetryTimeoutFired](raw)
	case "Cancel":
		return decodeAs[fsm.Cancel](raw)
	case "FilesChanged":
		return decodeAs[fsm.FilesChanged](raw)
	case "Reset":
		return decodeAs[fsm.Reset](raw)
	case "DropQueued":
		return decodeAs[fsm.DropQueued](raw)
	case "ApprovalDecided":
		return decodeAs[fsm.ApprovalDecided](raw)
	case "HooksDecided":
		return decodeAs[fsm.HooksDecided](raw)
	case "SelectModel":
		return decodeAs[fsm.SelectModel](raw)
	case "SelectEffort":
		return decodeAs[fsm.SelectEffort](raw)
	case "Compact":
		return decodeAs[fsm.Compact](raw)
	case "AdvanceIDs":
		return decodeAs[fsm.AdvanceIDs](raw)
	case "Load":
		return decodeAs[fsm.Load](raw)
	case "ChangesProposed":
		return decodeAs[fsm.ChangesProposed](raw)
	case "ChangesDecided":
		return decodeAs[fsm.ChangesDecided](raw)
	case "Rewind":
		return decodeAs[fsm.Rewind](raw)
	case "Redo":
		return decodeAs[fsm.Redo](raw)
	case "SetMode":
		return decodeAs[fsm.SetMode](raw)
	case "PlanDecided":
		return decodeAs[fsm.PlanDecided](raw)
	case "SpawnRequested":
		return decodeAs[fsm.SpawnRequested](raw)
	case "ChildUsage":
		return decodeAs[fsm.ChildUsage](raw)
	case "ChildTimedOut":
		return decodeAs[fsm.ChildTimedOut](raw)
	case "ChildFinished":
		return decodeAs[fsm.ChildFinished](raw)
	}
	return nil, fmt.Errorf("unknown event type %q", tag)
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

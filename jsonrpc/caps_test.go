package jsonrpc

import (
	"encoding/json"
	"testing"

	"go.lsp.dev/protocol"
)

// TestParseCaps: what a client declares — applyEdit with versioned and
// annotated edits, progress, configuration, showMessage requests with
// action properties, and experimental.loom's flags — and what a client
// that declares nothing gets.
func TestParseCaps(t *testing.T) {
	read := func(raw string) clientCaps {
		var c protocol.ClientCapabilities
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			t.Fatal(err)
		}
		return parseCaps(c)
	}
	full := read(`{"workspace": {"applyEdit": true, "configuration": true,
		"workspaceEdit": {"documentChanges": true, "changeAnnotationSupport": {}}},
		"window": {"workDoneProgress": true, "showMessage": {"messageActionItem": {"additionalPropertiesSupport": true}}},
		"experimental": {"loom": {"saveDocuments": true, "elicit": true, "thoughts": true, "workspaceTrust": true,
			"review": true, "userSettings": true, "diagnostics": true, "trustCommand": "loom.trust"}}}`)
	want := clientCaps{applyEdit: true, versionedEdits: true, annotations: true, workDoneProgress: true, configuration: true,
		showMessageRequest: true, actionProperties: true, loom: true, saveDocuments: true, elicit: true, thoughts: true,
		workspaceTrust: true, review: true, userSettings: true, diagnostics: true, trustCommand: "loom.trust"}
	if full != want {
		t.Errorf("full capabilities read as\n%+v\nwant\n%+v", full, want)
	}
	if got := read(`{"workspace": {"applyEdit": false, "workspaceEdit": {"documentChanges": true}}, "experimental": {"other": 1}}`); got != (clientCaps{}) {
		t.Errorf("a client declaring nothing of ours: %+v", got)
	}
	if got := read(`{"workspace": {"applyEdit": true}, "experimental": {"loom": {}}}`); got != (clientCaps{applyEdit: true, loom: true}) {
		t.Errorf("applyEdit alone and an empty experimental.loom: %+v", got)
	}
}

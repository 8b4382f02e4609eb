package acp

import (
	"context"
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// The files a command changed are not committed: the user keeps them
// (a commit) or discards them (the files as they were before the
// command). An LSP client runs loom.commit / loom.discard; an ACP client
// has only the prompt, so these are slash commands.

// Slash commands for the commands' changes.
var (
	keepAvailable = acpsdk.AvailableCommand{Name: "keep", Description: "commit what a command changed: /keep FILE… (all reported: /keep all)",
		Input: &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: "files, or all"}}}
	discardAvailable = acpsdk.AvailableCommand{Name: "discard", Description: "put back what a command changed: /discard FILE… (your later edits stay)",
		Input: &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: "files"}}}
)

// KeepHow and DiscardHow are how an ACP user keeps or discards the
// commands' changes, for workspace.HostOptions.
const (
	KeepHow    = "type /keep with their paths"
	DiscardHow = "type /discard with their paths"
)

// keepOrDiscard runs /keep or /discard (verb) on the files args name.
func (o slashRun) keepOrDiscard(ctx context.Context, verb string, args []string) string {
	s := o.s
	changes, err := s.ws.Changes().CommandChanges(ctx)
	if err != nil {
		return "/" + verb + ": " + err.Error()
	}
	if len(changes) == 0 {
		return "No command changed a file that waits for you to keep or discard it."
	}
	var reported []string
	for _, c := range changes {
		reported = append(reported, c.Rel)
	}
	paths := args
	if verb == "keep" && len(args) == 1 && args[0] == "all" {
		paths = reported
	}
	if len(paths) == 0 {
		return fmt.Sprintf("usage: /%s FILE…; the commands changed: %s", verb, strings.Join(reported, ", "))
	}
	var msg string
	if verb == "keep" {
		msg, err = s.ws.Changes().KeepCommandChanges(ctx, paths)
	} else {
		msg, err = s.ws.Changes().DiscardCommandChanges(ctx, paths)
	}
	if err != nil {
		return "/" + verb + ": " + err.Error()
	}
	return msg
}

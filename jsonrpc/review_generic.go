package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// A client without experimental.loom.review reviews a proposal in the
// way it can:
//   - one that confirms annotated edits (changeAnnotationSupport, LSP
//     3.16) gets the change as a workspace/applyEdit whose annotation
//     needs confirmation: applied means kept whole, refused discarded;
//   - any other is asked Keep / Discard with window/showMessageRequest,
//     with a short summary of the change (the file, +/- lines, the first
//     changed lines); Keep writes it (the open buffer through applyEdit,
//     else the disk) and commits it, Discard writes nothing.
// A client that cannot be asked writes nothing: the model reads that the
// change was not reviewed. An unreviewed byte never lands.

// Keep and discard are the choices of a change under review.
const (
	keepChanges    = "Keep"
	discardChanges = "Discard"
)

// summaryLines is how many changed lines a review question quotes.
const summaryLines = 6

// confirmProposal has a generic client review proposal p of conversation
// conv of folder, and tells the conversation the answer. It runs on a
// goroutine of its own.
func (s *Server) confirmProposal(folder, conv string, p workspace.ProposalNote) {
	ctx := s.ctx
	f, err := s.host.Folder(folder)
	if err != nil {
		return
	}
	sess, err := f.Conversation(conv)
	if err != nil {
		return
	}
	if p.Command != "" {
		s.confirmCommandChanges(ctx, sess, p)
		return
	}
	if len(p.Abs) == 0 || len(p.Changes) == 0 {
		return
	}
	s.mu.Lock()
	annotations := s.caps.applyEdit && s.caps.annotations
	s.mu.Unlock()
	if annotations {
		s.confirmAnnotated(ctx, folder, sess, p)
		return
	}
	var item *protocol.MessageActionItem
	err = s.askClient(ctx, "the review of "+p.Changes[0].Path, &protocol.ShowMessageRequestParams{
		Type: protocol.MessageTypeInfo, Message: reviewQuestion(folder, p),
		Actions: []protocol.MessageActionItem{{Title: keepChanges}, {Title: discardChanges}},
	}, &item)
	switch {
	case errors.Is(err, workspace.ErrUnsupported):
		_, _ = sess.Review().Unreviewed(ctx, p.ID, "the user asked to review changes (tools.edits = \"review\") and this editor does not answer Loom's questions, so it was not shown")
		return
	case err != nil:
		if ctx.Err() == nil {
			_, _ = sess.Review().Unreviewed(ctx, p.ID, "the editor could not ask the user: "+err.Error())
		}
		return
	}
	if item == nil || item.Title != keepChanges {
		_, _ = sess.Review().Decide(ctx, p.ID, nil, []string{workspace.AllHunks}, "")
		return
	}
	if _, err := sess.Review().Decide(ctx, p.ID, []string{workspace.AllHunks}, nil, ""); err != nil && !errors.Is(err, workspace.ErrNoProposal) {
		s.log.Info("keeping a reviewed change", "err", err)
	}
}

// reviewQuestion is the Keep / Discard question of a proposal: the file,
// its +/- line counts and its first changed lines.
func reviewQuestion(folder string, p workspace.ProposalNote) string {
	c := p.Changes[0]
	added, removed, first := diffSummary(c.Diff, summaryLines)
	verb := "change"
	if p.Created {
		verb = "create"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Loom (%s) wants to %s %s (+%d −%d):", filepath.Base(folder), verb, c.Path, added, removed)
	for _, l := range first {
		b.WriteString("\n" + l)
	}
	if n := added + removed - len(first); n > 0 {
		fmt.Fprintf(&b, "\n… %d more changed line(s)", n)
	}
	b.WriteString("\nKeep it (written and committed) or discard it (nothing is written)?")
	return b.String()
}

// diffSummary counts a unified diff's added and removed lines and
// returns its first n changed lines, each cut to 100 characters.
func diffSummary(diff string, n int) (added, removed int, first []string) {
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		switch {
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		default:
			continue
		}
		if len(first) < n {
			first = append(first, clip(l[:1]+" "+l[1:], 100))
		}
	}
	return added, removed, first
}

// confirmAnnotated asks a client that confirms annotated edits to apply
// proposal p with an applyEdit whose annotation needs confirmation.
// Applied means kept whole (the session finds the text there and commits
// it); refused means discarded, unless the document changed meanwhile
// (a version race), which the model reads as such.
func (s *Server) confirmAnnotated(ctx context.Context, folder string, sess *workspace.Conversation, p workspace.ProposalNote) {
	path := p.Abs[0]
	e := tools.NewEdit(folder, path, p.Created, p.OldText, p.NewText, 0)
	label := "Loom: " + filepath.Base(path)
	desc := fmt.Sprintf("the agent proposes %d change(s) to %s (tools.edits = \"review\")", len(p.Changes[0].Hunks), p.Changes[0].Path)
	yes := true
	const annotation = "loom.review"
	params := &protocol.ApplyWorkspaceEditParams{Label: &label}
	params.Edit.ChangeAnnotations = map[protocol.ChangeAnnotationIdentifier]protocol.ChangeAnnotation{
		annotation: {Label: label, NeedsConfirmation: &yes, Description: &desc},
	}
	edits := make([]protocol.TextDocumentEditElement, 0, len(e.TextEdits))
	for _, te := range e.TextEdits {
		edits = append(edits, &protocol.AnnotatedTextEdit{TextEdit: protocol.TextEdit{Range: lspRange(te.Range), NewText: te.NewText}, AnnotationID: annotation})
	}
	doc := protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: s.clientURI(path)}}
	_, sent, open := s.host.Overlay().Document(path)
	if open {
		doc.Version = &sent
	}
	params.Edit.DocumentChanges = []protocol.DocumentChange{&protocol.TextDocumentEdit{TextDocument: doc, Edits: edits}}
	var res protocol.ApplyWorkspaceEditResult
	err := s.callClient(ctx, protocol.MethodWorkspaceApplyEdit, params, &res)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			_, _ = sess.Review().Unreviewed(ctx, p.ID, "the editor could not show the change: "+err.Error())
		}
		return
	case !res.Applied:
		why := ""
		if res.FailureReason != nil {
			why = *res.FailureReason
		}
		_, now, stillOpen := s.host.Overlay().Document(path)
		if open && (!stillOpen || now != sent || strings.Contains(strings.ToLower(why), "version")) {
			_, _ = sess.Review().Unreviewed(ctx, p.ID, "the file changed in the editor while the change waited for review (a version race); read it again")
			return
		}
		_, _ = sess.Review().Decide(ctx, p.ID, nil, []string{workspace.AllHunks}, why)
		return
	}
	// The editor applied it: the session's three-way apply finds the
	// agent's text already there and only commits it.
	if _, err := sess.Review().Decide(ctx, p.ID, []string{workspace.AllHunks}, nil, ""); err != nil && !errors.Is(err, workspace.ErrNoProposal) {
		s.log.Info("review after a confirmed edit", "err", err)
	}
}

// confirmCommandChanges asks a generic client whether to keep or discard
// a command's changes (they are on disk already) with a
// window/showMessageRequest. Only an explicit Keep keeps (commits) them:
// a dismissed question, or a client that cannot ask, discards them, as
// nothing is committed without the user's word.
func (s *Server) confirmCommandChanges(ctx context.Context, sess *workspace.Conversation, p workspace.ProposalNote) {
	var files []string
	for _, c := range p.Changes {
		files = append(files, c.Path)
	}
	msg := fmt.Sprintf("`%s` changed %s: keep the changes (committed) or discard them (the files as they were before it)?", p.Command, strings.Join(files, ", "))
	params := &protocol.ShowMessageRequestParams{Type: protocol.MessageTypeInfo, Message: msg,
		Actions: []protocol.MessageActionItem{{Title: keepChanges}, {Title: discardChanges}}}
	var item *protocol.MessageActionItem
	err := s.askClient(ctx, msg, params, &item)
	if err == nil && item != nil && item.Title == keepChanges {
		_, _ = sess.Review().Decide(ctx, p.ID, []string{workspace.AllHunks}, nil, "")
		return
	}
	why := "the user did not choose to keep them"
	if err != nil {
		why = "the editor could not be asked"
	}
	_, _ = sess.Review().Decide(ctx, p.ID, nil, []string{workspace.AllHunks}, why)
}

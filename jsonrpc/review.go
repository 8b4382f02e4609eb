package jsonrpc

import (
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// MethodProposedChanges carries ProposedChangesParams, to clients that
// declare experimental.loom.review.
const MethodProposedChanges = "loom/proposedChanges"

// ProposedChangesParams is a proposal waiting for the user's review
// (tools.edits = "review"): answer it with loom.review.
type ProposedChangesParams struct {
	Folder string `json:"folder"`
	// Conversation is the id of the conversation it concerns; absent
	// for the folder's own notices.
	Conversation string           `json:"conversation,omitempty"`
	Turn         uint64           `json:"turn"`
	ID           string           `json:"id"`
	CallID       string           `json:"callId"`
	Changes      []ProposedChange `json:"changes"`
	// Command is the command line when these are a command's changes
	// (kind command: already on disk; accept keeps them, reject
	// discards them).
	Command string `json:"command,omitempty"`
	// Draft is what the user decided so far and the comment typed
	// (loom.reviewDraft), in loom.proposals' reply; absent when nothing.
	Draft *workspace.ReviewDraft `json:"draft,omitempty"`
	// View is how the call that proposes shows (its tool card's words),
	// for a client that draws the card before, or without, its
	// loom/toolCall.
	View workspace.ToolView `json:"view"`
}

// ReviewDraftArgs are loom.reviewDraft's arguments: the hunks accepted
// and rejected so far (the others undecided) and the comment typed.
type ReviewDraftArgs struct {
	URI      string   `json:"uri,omitempty"`
	ID       string   `json:"id"`
	Accepted []string `json:"accepted,omitempty"`
	Rejected []string `json:"rejected,omitempty"`
	Comment  string   `json:"comment,omitempty"`
	// Conversation selects one of the folder's conversations by id; ""
	// is the folder's most recent.
	Conversation string `json:"conversation,omitempty"`
}

// ProposedChange is one file of a proposal.
type ProposedChange struct {
	URI  string `json:"uri"`
	Path string `json:"path"`
	// Kind is edit, create, delete or command.
	Kind  string         `json:"kind"`
	Diff  string         `json:"diff"`
	Hunks []ProposedHunk `json:"hunks"`
}

// ProposedHunk is a part of a change the user accepts or rejects alone.
// Range is the lines of the current text it replaces (whole lines: the
// end is the start of the line after).
type ProposedHunk struct {
	ID    string         `json:"id"`
	Diff  string         `json:"diff"`
	Range protocol.Range `json:"range"`
}

// ReviewArgs are loom.review's arguments. Accept and Reject are lists of
// hunk ids or the string "all"; a hunk in neither is rejected.
type ReviewArgs struct {
	URI     string          `json:"uri,omitempty"`
	ID      string          `json:"id"`
	Accept  json.RawMessage `json:"accept,omitempty"`
	Reject  json.RawMessage `json:"reject,omitempty"`
	Comment string          `json:"comment,omitempty"`
	// Conversation selects one of the folder's conversations by id; ""
	// is the folder's most recent.
	Conversation string `json:"conversation,omitempty"`
}

// ProposalsResult is loom.proposals' reply: the proposals waiting for a
// review, for a client that (re)connects.
type ProposalsResult struct {
	Folder    string                  `json:"folder"`
	Proposals []ProposedChangesParams `json:"proposals"`
}

// hunkList decodes a list of hunk ids or "all".
func hunkList(field string, raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var all string
	if json.Unmarshal(raw, &all) == nil {
		if all != workspace.AllHunks {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %s must be a list of hunk ids or \"all\", got %q", CmdReview, field, all)
		}
		return []string{workspace.AllHunks}, nil
	}
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %s must be a list of hunk ids or \"all\": %v", CmdReview, field, err)
	}
	return ids, nil
}

func (h commandHandler) runReview(ctx context.Context, a ReviewArgs) (any, error) {
	s := h.s
	if a.ID == "" {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: id is required (the proposal's id from loom/proposedChanges)", CmdReview)
	}
	accept, err := hunkList("accept", a.Accept)
	if err != nil {
		return nil, err
	}
	reject, err := hunkList("reject", a.Reject)
	if err != nil {
		return nil, err
	}
	sess, err := s.session(CmdReview, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	res, err := sess.Review().Decide(ctx, a.ID, accept, reject, a.Comment)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

func (h commandHandler) runReviewDraft(ctx context.Context, a ReviewDraftArgs) (any, error) {
	s := h.s
	if a.ID == "" {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: id is required (the proposal's id from loom/proposedChanges)", CmdReviewDraft)
	}
	sess, err := s.session(CmdReviewDraft, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	return nil, sess.Review().SetDraft(ctx, a.ID, workspace.ReviewDraft{Accepted: a.Accepted, Rejected: a.Rejected, Comment: a.Comment})
}

func (h commandHandler) runProposals(ctx context.Context, a FolderArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdProposals, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	notes, err := sess.Review().Proposals(ctx)
	if err != nil {
		return nil, err
	}
	out := &ProposalsResult{Folder: sess.Folder().Path(), Proposals: []ProposedChangesParams{}}
	for i := range notes {
		out.Proposals = append(out.Proposals, s.proposedParams(sess.Folder().Path(), 0, &notes[i]))
	}
	return out, nil
}

// proposalView words the call that made a proposal: the command, or an
// edit (a write, for a new file) of its first file.
func proposalView(p *workspace.ProposalNote) workspace.ToolView {
	name, args := "bash", map[string]string{"command": p.Command}
	if p.Command == "" {
		name, args = "edit_file", map[string]string{"path": ""}
		if len(p.Changes) > 0 {
			args["path"] = p.Changes[0].Path
			if p.Changes[0].Kind == fsm.ChangeCreate {
				name = "write_file"
			}
		}
	}
	b, _ := json.Marshal(args)
	return workspace.ViewTool(name, string(b))
}

// proposedParams is the wire form of a proposal.
func (s *Server) proposedParams(folder string, turn uint64, p *workspace.ProposalNote) ProposedChangesParams {
	out := ProposedChangesParams{Folder: folder, Turn: turn, ID: p.ID, CallID: p.CallID, Command: p.Command, Draft: p.Draft, View: proposalView(p)}
	for i, c := range p.Changes {
		pc := ProposedChange{Path: c.Path, Kind: string(c.Kind), Diff: c.Diff, Hunks: []ProposedHunk{}}
		if i < len(p.Abs) {
			pc.URI = string(s.clientURI(p.Abs[i]))
		}
		for _, h := range c.Hunks {
			pc.Hunks = append(pc.Hunks, ProposedHunk{ID: h.ID, Diff: h.Diff, Range: protocol.Range{
				Start: protocol.Position{Line: uint32(h.StartLine)},
				End:   protocol.Position{Line: uint32(h.EndLine)},
			}})
		}
		out.Changes = append(out.Changes, pc)
	}
	return out
}

// ChangeProposed shows a proposal: as loom/proposedChanges to a client
// that reviews, else as a workspace/applyEdit whose change annotation
// needs the user's confirmation (LSP 3.16): applied means accepted whole,
// refused means rejected whole. It runs on the folder's outbox goroutine
// and must not block: the generic path answers on a goroutine of its own.
func (f *folderOut) ChangeProposed(n workspace.ChangeProposed) {
	p := &n.Proposal
	if f.caps().review {
		params := f.s.proposedParams(f.folder, n.Turn, p)
		f.s.notify(context.Background(), MethodProposedChanges, &params)
		return
	}
	note := *p
	f.s.goBackground(func() { f.s.confirmProposal(f.folder, f.conversation, note) })
}

// Rewound tells a loom client that the conversation was rewound.
func (f *folderOut) Rewound(n workspace.Rewound) {
	if f.caps().loom {
		f.s.notify(context.Background(), MethodRewound, &RewoundParams{Folder: f.folder, Conversation: f.conversation, Turn: n.Turn, Prompt: n.Prompt, Redone: n.Redone})
	}
}

// MethodRewound carries RewoundParams: the conversation was cut back to
// before Turn, whose Prompt goes back to the input (or, Redone, made
// whole again by a redo).
const MethodRewound = "loom/rewound"

// RewoundParams is a conversation rewind or its redo.
type RewoundParams struct {
	Folder string `json:"folder"`
	// Conversation is the id of the conversation it concerns; absent
	// for the folder's own notices.
	Conversation string `json:"conversation,omitempty"`
	Turn         uint64 `json:"turn"`
	Prompt       string `json:"prompt,omitempty"`
	Redone       bool   `json:"redone,omitempty"`
}

// RewindArgs are loom.rewind's arguments. Restore is "files",
// "conversation" or "both" (default "both").
type RewindArgs struct {
	URI     string `json:"uri,omitempty"`
	Turn    uint64 `json:"turn"`
	Restore string `json:"restore,omitempty"`
	// Conversation selects one of the folder's conversations by id; ""
	// is the folder's most recent.
	Conversation string `json:"conversation,omitempty"`
}

// CheckpointsResult is loom.checkpoints' reply.
type CheckpointsResult struct {
	Folder      string                 `json:"folder"`
	Checkpoints []workspace.Checkpoint `json:"checkpoints"`
	// CanRedo says whether loom.redo would undo a rewind now.
	CanRedo bool `json:"canRedo"`
}

func (h commandHandler) runCheckpoints(ctx context.Context, a FolderArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdCheckpoints, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	cps, err := sess.Changes().Checkpoints(ctx)
	if err != nil {
		return nil, err
	}
	if cps == nil {
		cps = []workspace.Checkpoint{}
	}
	return &CheckpointsResult{Folder: sess.Folder().Path(), Checkpoints: cps, CanRedo: sess.Changes().CanRedo(ctx)}, nil
}

func (h commandHandler) runRewind(ctx context.Context, a RewindArgs) (any, error) {
	s := h.s
	restore := fsm.Restore(a.Restore)
	switch restore {
	case "":
		restore = fsm.RestoreBoth
	case fsm.RestoreFiles, fsm.RestoreConversation, fsm.RestoreBoth:
	default:
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: restore must be \"files\", \"conversation\" or \"both\", got %q", CmdRewind, a.Restore)
	}
	if a.Turn == 0 {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: turn is required (a turn of loom.checkpoints)", CmdRewind)
	}
	sess, err := s.session(CmdRewind, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	res, err := sess.Changes().Rewind(ctx, a.Turn, restore)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

func (h commandHandler) runRedo(ctx context.Context, a FolderArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdRedo, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	res, err := sess.Changes().Redo(ctx)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

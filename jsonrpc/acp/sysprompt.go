package acp

import (
	"context"
	"errors"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// The client's system prompt (schema SystemPrompt, 1.30): systemPrompt
// {mode, content} on session/new, session/load and session/resume, offered
// with sessionCapabilities.systemPrompt {mode: {override: {}}} (wire.go
// adds it to the initialize response; the SDK v0.13.0 lacks both, so the
// member reaches the handlers in _meta, moved by deleteReader). append
// adds it to loom's instructions, override puts it in their place
// (workspace.ClientPrompt); either way it is text to the model and
// changes nothing of what the agent may do. A prompt loom cannot apply
// (an unknown mode, an empty content, a block that is not text) fails
// the request with -32602 before any session is made, loaded or resumed.

// systemPromptParams is the schema's SystemPrompt.
type systemPromptParams struct {
	Mode    string                `json:"mode"`
	Content []acpsdk.ContentBlock `json:"content"`
}

// clientPromptOf reads a request's systemPrompt; nil when it has none.
func clientPromptOf(meta map[string]any) (*workspace.ClientPrompt, error) {
	var sp systemPromptParams
	has, err := metaMember(meta, metaSystemPrompt, &sp)
	if !has {
		return nil, nil
	}
	if err != nil {
		return nil, invalidParams("systemPrompt: %v", err)
	}
	if sp.Mode != workspace.ClientPromptAppend && sp.Mode != workspace.ClientPromptOverride {
		return nil, invalidParams("systemPrompt: unsupported mode %q (append or override)", sp.Mode)
	}
	if len(sp.Content) == 0 {
		return nil, invalidParams("systemPrompt: content is empty")
	}
	var b strings.Builder
	for i, block := range sp.Content {
		if block.Text == nil {
			return nil, invalidParams("systemPrompt: content block %d is not text", i)
		}
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(block.Text.Text)
	}
	return &workspace.ClientPrompt{Mode: sp.Mode, Text: b.String()}, nil
}

// setClientPrompt applies p (nil: none) to session s's conversation.
func (a *agent) setClientPrompt(ctx context.Context, s *session, p *workspace.ClientPrompt) error {
	err := s.ws.Controls().SetClientPrompt(ctx, p)
	if errors.Is(err, workspace.ErrClientPrompt) {
		return invalidParams("%v", err)
	}
	if err == nil && p != nil {
		a.log.Info("client system prompt", "session", s.id, "mode", p.Mode, "bytes", len(p.Text))
	}
	return err
}

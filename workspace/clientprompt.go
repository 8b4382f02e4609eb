package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/loom-lsp/loom-lsp/config"
)

// A client's system prompt (ACP's systemPrompt on session/new, load and
// resume): text the client adds to loom's own instructions (append) or
// puts in place of loom's built-in ones (override: agent.system_prompt
// or the default). Either way the project's instructions (AGENTS.md),
// the skills' listing and the read roots' note stay, and nothing else
// changes: it is text to the model, never policy — tools, approvals,
// the sandbox and the mode are the user's configuration's, whatever the
// text says. It enters the conversation as the machine's configuration
// (fsm.Config.SystemPrompt, through Reconfigure): journaled, and applied
// when the next turn starts.

// The modes of a client's system prompt.
const (
	ClientPromptAppend   = "append"
	ClientPromptOverride = "override"
)

// ClientPrompt is a system prompt the client gave the conversation.
type ClientPrompt struct {
	// Mode is ClientPromptAppend or ClientPromptOverride.
	Mode string `json:"mode"`
	// Text is the prompt, not empty.
	Text string `json:"text"`
}

// ErrClientPrompt is wrapped by SetClientPrompt's error for a prompt it
// cannot apply.
var ErrClientPrompt = errors.New("client system prompt")

// SetClientPrompt sets (nil: clears) the client's system prompt of the
// conversation.
func (c Controls) SetClientPrompt(ctx context.Context, p *ClientPrompt) error {
	if p != nil {
		if p.Mode != ClientPromptAppend && p.Mode != ClientPromptOverride {
			return fmt.Errorf("%w: unknown mode %q (append or override)", ErrClientPrompt, p.Mode)
		}
		if p.Text == "" {
			return fmt.Errorf("%w: empty", ErrClientPrompt)
		}
		c := *p
		p = &c
	}
	return c.do(ctx, func() { c.usePrompt(p) })
}

func same(a, b *ClientPrompt) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// baseInstructions are loom's own instructions (under cfg, for the
// folder dir) with the client's prompt p applied: appended, or in place
// of them.
func baseInstructions(cfg config.Config, dir string, p *ClientPrompt) string {
	own := systemPrompt(cfg.Agent.SystemPrompt, dir)
	switch {
	case p == nil:
		return own
	case p.Mode == ClientPromptOverride:
		return p.Text
	default:
		return own + "\n\n" + p.Text
	}
}

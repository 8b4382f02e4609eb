package fsm

import "fmt"

// CheckPairing reports whether msgs is a conversation an OpenAI-compatible
// server accepts as far as tool calls go: every assistant tool call is
// answered by exactly one tool message, in call order, right after it
// (other messages may follow the answers), and no tool message answers
// anything else. Every SendLlmRequest the machine emits satisfies it.
func CheckPairing(msgs []Message) error {
	for i := 0; i < len(msgs); i++ {
		msg := msgs[i]
		switch msg.Role {
		case RoleTool:
			return fmt.Errorf("message %d: tool result %q answers no pending call", i, msg.ToolCallID)
		case RoleAssistant:
			for k, c := range msg.ToolCalls {
				j := i + 1 + k
				if j >= len(msgs) {
					return fmt.Errorf("message %d: call %q has no result", i, c.ID)
				}
				if msgs[j].Role != RoleTool || msgs[j].ToolCallID != c.ID {
					return fmt.Errorf("message %d: call %q is answered by message %d (%s %q)", i, c.ID, j, msgs[j].Role, msgs[j].ToolCallID)
				}
			}
			i += len(msg.ToolCalls)
		}
	}
	return nil
}

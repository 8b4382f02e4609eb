// Command bareagent is the floor loom's ACP latency is measured against:
// an agent on the ACP Go SDK that does nothing but answer (initialize,
// session/new with a fixed id, an empty prompt turn). Built by the
// benchmarks of cmd/loom-lsp.
package main

import (
	"context"
	"os"

	acpsdk "github.com/coder/acp-go-sdk"
)

// bare answers the requests a client sends to open a session; the other
// methods of acpsdk.Agent are left nil (never called by the benchmark).
type bare struct{ acpsdk.Agent }

func (bare) Initialize(context.Context, acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	return acpsdk.InitializeResponse{ProtocolVersion: acpsdk.ProtocolVersionNumber}, nil
}

func (bare) NewSession(context.Context, acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	return acpsdk.NewSessionResponse{SessionId: "bare"}, nil
}

func (bare) Prompt(context.Context, acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
}

func (bare) Cancel(context.Context, acpsdk.CancelNotification) error { return nil }

func main() {
	conn := acpsdk.NewAgentSideConnection(bare{}, os.Stdout, os.Stdin)
	<-conn.Done()
}

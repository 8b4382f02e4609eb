package jsonrpc

import (
	"context"
	"encoding/json"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/loom-lsp/loom-lsp/config"
)

// How inline completion's capability reaches the client. A client that
// registers textDocument/inlineCompletion dynamically (it declared
// textDocument.inlineCompletion.dynamicRegistration, as VS Code's
// extension does) gets it registered with client/registerCapability
// while completion is on in some open folder, and unregistered when it
// goes off: settings pulled later turn it on without a restart. Any
// other client gets inlineCompletionProvider in the initialize result
// when completion is on then (and null answers when it is off later).

// inlineRegistrationID is the id of loom's one registration.
const inlineRegistrationID = "loom/inlineCompletion"

// registrationWait bounds a client's answer to a (un)registration.
const registrationWait = 30 * time.Second

// registration is where the dynamic registration stands; guarded by
// inlineCompletions.mu.
type registration struct {
	// dynamic: the client registers inline completion dynamically.
	dynamic bool
	// started: initialized arrived, registrations may be sent.
	started bool
	// have: registered with the client now (its last answer).
	have bool
	// dirty: the settings changed since the sender last looked.
	dirty bool
	// sending: a goroutine sends the (un)registrations, one at a time.
	sending bool
}

// initialize answers the capability half of initialize: with a client
// that registers dynamically nothing is declared (it is registered at
// initialized when on); otherwise inlineCompletionProvider is declared
// when completion is on for the folders initialize names, from the
// user's configuration and initOpts (the client's
// initializationOptions). The settings layer is pending, so that this
// look records no folder's first trust (initialized's load does, with
// every layer).
func (ic *inlineCompletions) initialize(res *protocol.InitializeResult, params jsonrpc2.RawMessage, folders []uri.URI, initOpts []byte, vouches bool) (any, error) {
	dynamic := registersInlineDynamically(params)
	ic.mu.Lock()
	ic.reg.dynamic = dynamic
	ic.mu.Unlock()
	if dynamic {
		return res, nil
	}
	var dirs []string
	for _, u := range folders {
		if p, err := uriPath(u); err == nil {
			dirs = append(dirs, p)
		}
	}
	on := ic.host.CompletionConfigured(dirs, []config.Override{
		{Name: overrideInitOptions, JSON: unwrapLoom(initOpts), VouchesTrust: vouches},
		{Name: overrideSettings, Pushed: true, Pending: true},
	})
	if !on {
		return res, nil
	}
	return declareInlineCompletion(res)
}

// registersInlineDynamically reads
// capabilities.textDocument.inlineCompletion.dynamicRegistration from
// initialize's params (go.lsp.dev's 3.17 types have no field for it).
func registersInlineDynamically(params jsonrpc2.RawMessage) bool {
	var p struct {
		Capabilities struct {
			TextDocument struct {
				InlineCompletion struct {
					DynamicRegistration bool `json:"dynamicRegistration"`
				} `json:"inlineCompletion"`
			} `json:"textDocument"`
		} `json:"capabilities"`
	}
	return json.Unmarshal(params, &p) == nil && p.Capabilities.TextDocument.InlineCompletion.DynamicRegistration
}

// started: initialized arrived; the registration follows the settings
// from now on.
func (ic *inlineCompletions) started() {
	ic.mu.Lock()
	ic.reg.started = true
	ic.mu.Unlock()
	ic.settingsChanged()
}

// settingsChanged is called when a folder published new settings (on
// its goroutine: it does not block) and when folders come and go: the
// registration is brought in line with them on a goroutine of its own,
// one request at a time, in order.
func (ic *inlineCompletions) settingsChanged() {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if !ic.reg.dynamic || !ic.reg.started {
		return
	}
	ic.reg.dirty = true
	if ic.reg.sending {
		return
	}
	ic.reg.sending = true
	ic.client.goBackground(ic.sendRegistrations)
}

// sendRegistrations registers or unregisters until the registration
// matches whether completion is on in some open folder.
func (ic *inlineCompletions) sendRegistrations() {
	for {
		ic.mu.Lock()
		if !ic.reg.dirty {
			ic.reg.sending = false
			ic.mu.Unlock()
			return
		}
		ic.reg.dirty = false
		have := ic.reg.have
		ic.mu.Unlock()
		want := ic.host.CompletionOn()
		if want == have {
			continue
		}
		if err := ic.setRegistered(want); err != nil {
			ic.log.Warn("inline completion registration failed", "register", want, "err", err)
			continue
		}
		ic.mu.Lock()
		ic.reg.have = want
		ic.mu.Unlock()
	}
}

// setRegistered sends client/registerCapability (on) or
// client/unregisterCapability (off) for textDocument/inlineCompletion.
func (ic *inlineCompletions) setRegistered(on bool) error {
	// Bounded: a client that never answers must not hold the sender.
	ctx, cancel := context.WithTimeout(context.Background(), registrationWait)
	defer cancel()
	if !on {
		return ic.client.callClient(ctx, protocol.MethodClientUnregisterCapability, &protocol.UnregistrationParams{
			Unregisterations: []protocol.Unregistration{{ID: inlineRegistrationID, Method: MethodInlineCompletion}},
		}, nil)
	}
	return ic.client.callClient(ctx, protocol.MethodClientRegisterCapability, &protocol.RegistrationParams{
		Registrations: []protocol.Registration{{ID: inlineRegistrationID, Method: MethodInlineCompletion,
			// The files of the folders: loom completes what it tracks.
			RegisterOptions: protocol.LSPAny(`{"documentSelector":[{"scheme":"file"}]}`)}},
	}, nil)
}

// declareInlineCompletion adds inlineCompletionProvider to the
// capabilities of an initialize result, which go.lsp.dev's 3.17 types
// have no field for.
func declareInlineCompletion(res *protocol.InitializeResult) (any, error) {
	raw, err := protocol.Marshal(res)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(top["capabilities"], &caps); err != nil {
		return nil, err
	}
	caps["inlineCompletionProvider"] = json.RawMessage(`{}`)
	if top["capabilities"], err = json.Marshal(caps); err != nil {
		return nil, err
	}
	out, err := json.Marshal(top)
	return jsonrpc2.RawMessage(out), err
}

package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/elicit"
)

// Elicitation: a server asks the user mid-call (form or URL mode). The
// question goes to the newest in-flight call's conversation
// (tools.Env.Elicit), which asks the user through its front end, checks
// the answer against the form, journals the exchange and returns what to
// send. A call with no one to ask, or a schema loom cannot show, is
// declined (and logged). A URL-mode request's completion notification
// reaches the call that asked as its progress.

// askerEntry is one in-flight call's way to ask its user, and its
// progress channel (for a URL-mode request's completion).
type askerEntry struct {
	id       int
	ask      func(context.Context, elicit.Request) (elicit.Result, error)
	progress chan<- string
	clock    *callClock // the call's timeout, stopped while a question waits
}

// watchElicit registers the asker of one call; the returned func
// unregisters it. The newest call's asker answers a request, its clock
// stopped meanwhile.
func (s *server) watchElicit(env *tools.Env, progress chan<- string, clock *callClock) func() {
	if env == nil || env.Elicit == nil {
		return func() {}
	}
	s.progMu.Lock()
	defer s.progMu.Unlock()
	s.nextToken++
	id := s.nextToken
	s.askers = append(s.askers, &askerEntry{id: id, ask: env.Elicit, progress: progress, clock: clock})
	return func() {
		s.progMu.Lock()
		defer s.progMu.Unlock()
		for i, a := range s.askers {
			if a.id == id {
				s.askers = append(s.askers[:i], s.askers[i+1:]...)
				break
			}
		}
	}
}

// elicit answers the server's elicitation/create.
func (s *server) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	p := req.Params
	log := s.m.opts.Logger.With("mcp_server", s.spec.Name)
	decline := &sdk.ElicitResult{Action: elicit.Decline}
	if p == nil {
		return decline, nil
	}
	r := elicit.Request{Server: s.spec.Name, Message: p.Message, Mode: p.Mode, URL: p.URL, ElicitationID: p.ElicitationID}
	if r.Mode == "" {
		r.Mode = elicit.ModeForm
	}
	if r.Mode == elicit.ModeForm {
		fields, err := elicit.Fields(p.RequestedSchema)
		if err != nil {
			log.Info("MCP elicitation declined: its form cannot be shown", "err", err)
			return decline, nil
		}
		r.Fields = fields
	}
	s.progMu.Lock()
	var a *askerEntry
	if n := len(s.askers); n > 0 {
		a = s.askers[n-1]
	}
	s.progMu.Unlock()
	if a == nil {
		log.Info("MCP elicitation declined: no call of a conversation is asking this server")
		return decline, nil
	}
	a.clock.pause()
	res, err := a.ask(ctx, r)
	a.clock.resume()
	if err != nil {
		return &sdk.ElicitResult{Action: elicit.Cancel}, nil
	}
	if r.Mode == elicit.ModeURL && res.Action == elicit.Accept && r.ElicitationID != "" {
		s.progMu.Lock()
		if s.urls == nil {
			s.urls = map[string]urlWait{}
		}
		s.urls[r.ElicitationID] = urlWait{url: r.URL, asker: a.id}
		s.progMu.Unlock()
	}
	out := &sdk.ElicitResult{Action: res.Action}
	if res.Action == elicit.Accept && r.Mode == elicit.ModeForm {
		out.Content = res.Content
	}
	return out, nil
}

// urlWait is a URL-mode request the user accepted, waiting for the
// server's completion notification.
type urlWait struct {
	url   string
	asker int
}

// elicitationComplete is a server's notifications/elicitation/complete
// for a URL-mode request the user accepted: the call that asked says so
// as its progress while it runs, else it is reported (an info).
func (s *server) elicitationComplete(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
	if req.Params == nil {
		return
	}
	s.progMu.Lock()
	w, ok := s.urls[req.Params.ElicitationID]
	delete(s.urls, req.Params.ElicitationID)
	msg := s.spec.Name + ": the step at " + w.url + " is complete"
	sent := false
	for _, a := range s.askers {
		if ok && a.id == w.asker {
			// Sent under the lock while the call is registered: the call
			// unregisters (under the lock) before it reads what is left.
			select {
			case a.progress <- msg:
				sent = true
			default:
			}
		}
	}
	s.progMu.Unlock()
	if !ok || sent {
		return
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	s.m.report(Report{Server: s.spec.Name, Text: "MCP server " + msg, Info: true})
}

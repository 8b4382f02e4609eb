package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Elicitation (form mode): a server asks the user mid-call. loom asks
// through the call's conversation (tools.Env.Elicit: an approval-like
// request, LSP window/showMessageRequest or ACP
// session/request_permission, with the approval timeout) whether to send
// the form's defaults; a form with a required field that has no default,
// a URL-mode request, or a call with no one to ask is declined, and the
// server is told so (action "decline"); no answer in time is "cancel".

// elicitAsker is one in-flight call's way to ask its user.
type elicitAsker func(ctx context.Context, question string) (bool, error)

// watchElicit registers the asker of one call; the returned func
// unregisters it. The newest call's asker answers a request.
func (s *server) watchElicit(ask elicitAsker) func() {
	if ask == nil {
		return func() {}
	}
	s.progMu.Lock()
	defer s.progMu.Unlock()
	s.nextToken++
	id := s.nextToken
	s.askers = append(s.askers, askerEntry{id, ask})
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

type askerEntry struct {
	id  int
	ask elicitAsker
}

// elicit answers the server's elicitation/create.
func (s *server) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	p := req.Params
	log := s.m.opts.Logger.With("mcp_server", s.spec.Name)
	if p == nil || (p.Mode != "" && p.Mode != "form") {
		log.Info("MCP elicitation declined: only form mode is answered")
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	s.progMu.Lock()
	var ask elicitAsker
	if n := len(s.askers); n > 0 {
		ask = s.askers[n-1].ask
	}
	s.progMu.Unlock()
	if ask == nil {
		log.Info("MCP elicitation declined: no call of a conversation is asking this server")
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	content, fields, missing := formDefaults(p.RequestedSchema)
	if len(missing) > 0 {
		log.Info("MCP elicitation declined: required fields without a default", "fields", missing)
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	q := fmt.Sprintf("MCP server %s asks: %s", s.spec.Name, p.Message)
	if fields != "" {
		q += "\nAllow sends: " + fields
	}
	ok, err := ask(ctx, q)
	switch {
	case err != nil:
		return &sdk.ElicitResult{Action: "cancel"}, nil
	case !ok:
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	return &sdk.ElicitResult{Action: "accept", Content: content}, nil
}

// formDefaults reads a form's flat schema: the defaults to send, them
// described, and the required fields that have none.
func formDefaults(schema any) (content map[string]any, described string, missing []string) {
	var s struct {
		Properties map[string]struct {
			Title   string `json:"title"`
			Default any    `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	raw, _ := json.Marshal(schema)
	_ = json.Unmarshal(raw, &s)
	content = map[string]any{}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	var parts []string
	for _, name := range names {
		if d := s.Properties[name].Default; d != nil {
			content[name] = d
			b, _ := json.Marshal(d)
			parts = append(parts, name+"="+string(b))
		}
	}
	for _, r := range s.Required {
		if _, ok := content[r]; !ok {
			missing = append(missing, r)
		}
	}
	return content, strings.Join(parts, ", "), missing
}

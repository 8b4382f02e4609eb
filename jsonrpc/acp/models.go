package acp

import (
	"context"
	"errors"
	"slices"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// Model switching in ACP, per session (conversation), journaled like
// LSP's loom.setModel (workspace.Conversation.SetModel). The models the
// server lists are offered two ways, for the clients of both:
//
//   - the session's config option "model" (category "model"): in
//     session/new, load and resume responses' configOptions, switched
//     with session/set_config_option (stable ACP);
//   - models (SessionModelState) in the same responses, switched with
//     session/set_model (unstable ACP, what Zed uses).
//
// Either way the client gets a config_option_update with the new value.
// A session opens with the models known at once (remembered from the
// server's last answer, else the current one alone), and gets a
// config_option_update when the server's list comes and differs.

// modelConfigID is the id of the model's session config option.
const modelConfigID = "model"

// listModelsTimeout bounds the question to the model server for its
// list, asked in the background when a session opens.
const listModelsTimeout = 10 * time.Second

// sessionModels is the model state of session s: what its responses
// advertise.
type sessionModels struct {
	state   *acpsdk.SessionModelState
	options []acpsdk.SessionConfigOption
}

// modelsOf returns at once the models known of conversation c's server
// (remembered from an earlier answer, else the current model alone): a
// session opens without waiting for the model server. The server is
// asked in the background; when its list differs, session id gets a
// config_option_update — after the response that names the session when
// opening is set (session/new, load, resume: modelsOf runs in their
// handler, before the response).
func (a *agent) modelsOf(ctx context.Context, id acpsdk.SessionId, c *workspace.Conversation, opening bool) (sessionModels, error) {
	known, err := c.Controls().ModelCatalog().Known(ctx)
	if err != nil {
		return sessionModels{}, err
	}
	written := make(chan struct{})
	if opening {
		a.watch.after(string(id), func() { close(written) })
	} else {
		close(written)
	}
	a.followModels(id, c, known, written)
	return modelState(known), nil
}

// followModels asks the model server for conversation c's models and,
// once written is closed, tells the client when they are not those it
// was given.
func (a *agent) followModels(id acpsdk.SessionId, c *workspace.Conversation, known workspace.ModelList, written <-chan struct{}) {
	a.bg.Add(1)
	go func() {
		defer a.bg.Done()
		ctx, cancel := context.WithTimeout(a.bgCtx, listModelsTimeout)
		defer cancel()
		list, err := c.Controls().ModelCatalog().Ask(ctx)
		if err != nil {
			return
		}
		select {
		case <-written:
		case <-a.bgCtx.Done():
			return
		}
		if list.Error != "" {
			a.log.Info("the model server lists no models", "error", list.Error)
		}
		if list.Current == known.Current && slices.Equal(list.Models, known.Models) {
			return
		}
		opts := modelState(list).options
		a.rememberModels(id, opts)
		if mode, _, err := c.Controls().Mode(ctx); err == nil {
			opts = append(opts, modeOption(mode))
		}
		a.updates.send(id, acpsdk.SessionUpdate{ConfigOptionUpdate: &acpsdk.SessionConfigOptionUpdate{
			SessionUpdate: "config_option_update", ConfigOptions: opts,
		}})
	}()
}

// modelState turns a workspace model list into ACP's two shapes.
func modelState(list workspace.ModelList) sessionModels {
	state := &acpsdk.SessionModelState{CurrentModelId: acpsdk.ModelId(list.Current), AvailableModels: []acpsdk.ModelInfo{}}
	opts := acpsdk.SessionConfigSelectOptionsUngrouped{}
	for _, id := range list.Models {
		info := acpsdk.ModelInfo{ModelId: acpsdk.ModelId(id), Name: id}
		if id == list.Configured {
			info.Description = acpsdk.Ptr("model.name in loom.toml")
		}
		state.AvailableModels = append(state.AvailableModels, info)
		opts = append(opts, acpsdk.SessionConfigSelectOption{Value: acpsdk.SessionConfigValueId(id), Name: id, Description: info.Description})
	}
	category := acpsdk.SessionConfigOptionCategoryModel
	option := acpsdk.SessionConfigOption{Select: &acpsdk.SessionConfigOptionSelect{
		Type: "select", Id: modelConfigID, Name: "Model", Category: &category,
		Description:  acpsdk.Ptr("the model this conversation's next requests use"),
		CurrentValue: acpsdk.SessionConfigValueId(list.Current),
		Options:      acpsdk.SessionConfigSelectOptions{Ungrouped: &opts},
	}}
	return sessionModels{state: state, options: []acpsdk.SessionConfigOption{option}}
}

// setModel switches session id's conversation to model and tells the
// client the new value (config_option_update).
func (a *agent) setModel(ctx context.Context, id acpsdk.SessionId, model string) (sessionModels, error) {
	s, err := a.liveSession(id)
	if err != nil {
		return sessionModels{}, err
	}
	if model == "" {
		return sessionModels{}, invalidParams("the model id is empty")
	}
	if _, err := s.ws.Controls().SetModel(ctx, model); err != nil {
		if errors.Is(err, workspace.ErrBadModel) {
			return sessionModels{}, invalidParams("%v", err)
		}
		return sessionModels{}, err
	}
	st, err := a.stateOf(ctx, s.id, s.ws, false)
	if err != nil {
		return sessionModels{}, err
	}
	a.updates.send(s.id, acpsdk.SessionUpdate{ConfigOptionUpdate: &acpsdk.SessionConfigOptionUpdate{
		SessionUpdate: "config_option_update", ConfigOptions: st.options,
	}})
	a.log.Info("model switched", "session", s.id, "model", model)
	return st.sessionModels, nil
}

// UnstableSetSessionModel implements session/set_model (unstable ACP):
// the session's next requests use the model. The name is not checked
// against the server's list (a server may serve models it does not
// list); a request to a model the server lacks fails with its error.
func (a *agent) UnstableSetSessionModel(ctx context.Context, p acpsdk.UnstableSetSessionModelRequest) (acpsdk.UnstableSetSessionModelResponse, error) {
	_, err := a.setModel(ctx, p.SessionId, string(p.ModelId))
	return acpsdk.UnstableSetSessionModelResponse{}, err
}

// SetSessionConfigOption implements acpsdk.Agent: the options are
// "model" (see UnstableSetSessionModel), "mode" (modes.go) and "effort"
// (effort.go).
func (a *agent) SetSessionConfigOption(ctx context.Context, p acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	v := p.ValueId
	if v == nil {
		return acpsdk.SetSessionConfigOptionResponse{}, invalidParams("the config options are %q (a model id), %q (ask, plan or agent) and %q (a reasoning effort or default)", modelConfigID, modeConfigID, effortConfigID)
	}
	var err error
	switch v.ConfigId {
	case modelConfigID:
		_, err = a.setModel(ctx, v.SessionId, string(v.Value))
	case modeConfigID:
		err = a.setMode(ctx, v.SessionId, string(v.Value))
	case effortConfigID:
		err = a.setEffort(ctx, v.SessionId, string(v.Value))
	default:
		return acpsdk.SetSessionConfigOptionResponse{}, invalidParams("unknown config option %q (they are %q, %q and %q)", v.ConfigId, modelConfigID, modeConfigID, effortConfigID)
	}
	if err != nil {
		return acpsdk.SetSessionConfigOptionResponse{}, err
	}
	s, err := a.liveSession(v.SessionId)
	if err != nil {
		return acpsdk.SetSessionConfigOptionResponse{}, err
	}
	st, err := a.stateOf(ctx, s.id, s.ws, false)
	if err != nil {
		return acpsdk.SetSessionConfigOptionResponse{}, err
	}
	return acpsdk.SetSessionConfigOptionResponse{ConfigOptions: st.options}, nil
}

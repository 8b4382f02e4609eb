package acp

import (
	"context"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// effortConfigID is the session config option of the conversation's
// reasoning effort (category thought_level): "default" for [model]
// reasoning_effort, or one of config.ReasoningEfforts.
const effortConfigID = "effort"

// effortDefault is the option's value for the configured effort.
const effortDefault = "default"

// effortOption is the session config option "effort": current is the
// conversation's choice ("" = the configured one, named in its label).
func effortOption(current, configured string) acpsdk.SessionConfigOption {
	def := "Default"
	if configured != "" {
		def = "Default (" + configured + ")"
	}
	opts := acpsdk.SessionConfigSelectOptionsUngrouped{{Value: effortDefault, Name: def, Description: acpsdk.Ptr("[model] reasoning_effort of the settings")}}
	for _, e := range config.ReasoningEfforts {
		opts = append(opts, acpsdk.SessionConfigSelectOption{Value: acpsdk.SessionConfigValueId(e), Name: e})
	}
	value := effortDefault
	if current != "" {
		value = current
	}
	category := acpsdk.SessionConfigOptionCategoryThoughtLevel
	return acpsdk.SessionConfigOption{Select: &acpsdk.SessionConfigOptionSelect{
		Type: "select", Id: effortConfigID, Name: "Reasoning effort", Category: &category,
		Description:  acpsdk.Ptr("how hard the model thinks in this session, sent as its API spells it"),
		CurrentValue: acpsdk.SessionConfigValueId(value),
		Options:      acpsdk.SessionConfigSelectOptions{Ungrouped: &opts},
	}}
}

// effortOptionOf is conversation c's effort option.
func effortOptionOf(ctx context.Context, c *workspace.Conversation) (acpsdk.SessionConfigOption, error) {
	effort, chosen, err := c.Controls().Effort(ctx)
	if err != nil {
		return acpsdk.SessionConfigOption{}, err
	}
	if chosen {
		return effortOption(effort, ""), nil
	}
	return effortOption("", effort), nil
}

// setEffort sets session id's reasoning effort ("default": the
// configured one).
func (a *agent) setEffort(ctx context.Context, id acpsdk.SessionId, effort string) error {
	s, err := a.liveSession(id)
	if err != nil {
		return err
	}
	if effort == effortDefault {
		effort = ""
	}
	if _, err := s.ws.Controls().SetEffort(ctx, effort); err != nil {
		return invalidParams("%v", err)
	}
	a.log.Info("effort set", "session", s.id, "effort", effort)
	return nil
}

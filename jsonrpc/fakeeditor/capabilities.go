package fakeeditor

import (
	"encoding/json"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// initializeParams are initialize's params as the editor's Config
// declares them, marshalled.
func (e *Editor) initializeParams() ([]byte, error) {
	params := protocol.InitializeParams{Capabilities: e.capabilities()}
	params.ClientInfo = protocol.ClientInfo{Name: "fakeeditor"}
	if e.cfg.ClientName != "" {
		params.ClientInfo.Name = e.cfg.ClientName
	}
	var folders []protocol.WorkspaceFolder
	for _, f := range e.cfg.Folders {
		folders = append(folders, protocol.WorkspaceFolder{URI: uri.File(f), Name: f})
	}
	if len(folders) > 0 {
		params.WorkspaceFolders = protocol.NewNullable(folders)
	}
	if e.cfg.InitializationOptions != nil {
		raw, err := json.Marshal(e.cfg.InitializationOptions)
		if err != nil {
			return nil, err
		}
		params.InitializationOptions = raw
	}
	raw, err := protocol.Marshal(&params)
	if err != nil || !e.cfg.InlineDynamic {
		return raw, err
	}
	return withInlineDynamic(raw)
}

// capabilities are the client capabilities the Config declares.
func (e *Editor) capabilities() protocol.ClientCapabilities {
	caps := protocol.ClientCapabilities{
		Workspace: e.workspaceCapabilities(),
		Window:    e.windowCapabilities(),
	}
	if e.cfg.Loom {
		caps.Experimental, _ = json.Marshal(map[string]any{"loom": e.loomCapabilities()})
	}
	return caps
}

func (e *Editor) workspaceCapabilities() *protocol.WorkspaceClientCapabilities {
	yes := true
	ws := &protocol.WorkspaceClientCapabilities{WorkspaceFolders: &yes}
	if e.cfg.ApplyEdit {
		ws.ApplyEdit = &yes
		if !e.cfg.Unversioned {
			ws.WorkspaceEdit = &protocol.WorkspaceEditClientCapabilities{DocumentChanges: &yes}
			if e.cfg.Annotations {
				ws.WorkspaceEdit.ChangeAnnotationSupport = &protocol.ChangeAnnotationsSupportOptions{}
			}
		}
	}
	if e.cfg.Settings != nil {
		ws.Configuration = &yes
	}
	return ws
}

// windowCapabilities is nil for a client that declares neither
// showMessage nor work-done progress (as Vim's ALE).
func (e *Editor) windowCapabilities() *protocol.WindowClientCapabilities {
	if e.cfg.NoShowMessage && !e.cfg.WorkDoneProgress {
		return nil
	}
	yes := true
	w := &protocol.WindowClientCapabilities{}
	if e.cfg.WorkDoneProgress {
		w.WorkDoneProgress = &yes
	}
	if !e.cfg.NoShowMessage {
		w.ShowMessage = &protocol.ShowMessageRequestClientCapabilities{
			MessageActionItem: &protocol.ClientShowMessageActionItemOptions{AdditionalPropertiesSupport: &yes},
		}
	}
	return w
}

// loomCapabilities is experimental.loom: saveDocuments always, and each
// feature the Config (or a Diagnostics hook) turns on.
func (e *Editor) loomCapabilities() map[string]any {
	loom := map[string]any{"saveDocuments": true}
	if e.cfg.TrustCommand != "" {
		loom["trustCommand"] = e.cfg.TrustCommand
	}
	features := map[string]bool{
		"thoughts":       e.cfg.Thoughts,
		"workspaceTrust": e.cfg.WorkspaceTrust,
		"review":         e.cfg.Review,
		"userSettings":   e.cfg.UserSettings,
		"diagnostics":    e.Hooks.Diagnostics != nil,
		"elicit":         e.Hooks.Elicit != nil,
	}
	for name, on := range features {
		if on {
			loom[name] = true
		}
	}
	return loom
}

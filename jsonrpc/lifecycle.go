package jsonrpc

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// clientCaps is what the server uses of the client's capabilities.
type clientCaps struct {
	// loom: the client declared experimental.loom and understands our
	// loom/* notifications.
	loom bool
	// saveDocuments: it declared experimental.loom.saveDocuments.
	saveDocuments bool
	// elicit: it declared experimental.loom.elicit and answers
	// loom/elicit (an MCP server's form or URL).
	elicit bool
	// thoughts: it declared experimental.loom.thoughts and shows
	// loom/displayMessage of kind "thought" apart from the answer.
	thoughts bool
	// applyEdit: it applies workspace edits (workspace.applyEdit).
	applyEdit bool
	// versionedEdits: it applies versioned TextDocumentEdits
	// (workspace.workspaceEdit.documentChanges); without it edits go as
	// unversioned "changes".
	versionedEdits bool
	// workDoneProgress: window.workDoneProgress.
	workDoneProgress bool
	// configuration: it answers workspace/configuration, so the loom
	// section is pulled rather than read from pushed payloads.
	configuration bool
	// workspaceTrust: it declared experimental.loom.workspaceTrust, so
	// trust.workspace in its initializationOptions vouches for the
	// folders (VS Code's workspace trust).
	workspaceTrust bool
	// userSettings: it declared experimental.loom.userSettings, so it
	// answers a second configuration item, section loom.user, with the
	// user's own settings (VS Code's user settings, which no repository
	// fills); the loom section then holds the workspace's settings only.
	userSettings bool
	// trustCommand is experimental.loom.trustCommand: how the client's
	// user runs loom.trust there (":LoomTrust"), for the notice about
	// ignored settings (trustHow).
	trustCommand string
	// review: it declared experimental.loom.review and answers
	// loom/proposedChanges with loom.review.
	review bool
	// showMessageRequest: it declared window.showMessage, so it answers
	// window/showMessageRequest (approvals). Clients that answer without
	// declaring it (eglot, lsp-mode) are known by name (knownAsker); any
	// other is asked with a short first wait (ask.go).
	showMessageRequest bool
	// knownAsker: clientInfo.name is a client known to answer
	// window/showMessageRequest whether or not it declared it.
	knownAsker bool
	// annotations: workspace.workspaceEdit.changeAnnotationSupport, so an
	// applyEdit whose annotation needs confirmation is shown to the user
	// for confirmation before it applies.
	annotations bool
	// diagnostics: it declared experimental.loom.diagnostics and
	// answers loom/diagnostics from its own language servers.
	diagnostics bool
	// actionProperties: window.showMessage.messageActionItem
	// .additionalPropertiesSupport: the answer carries back the properties
	// of the action item picked (an edited rule).
	actionProperties bool
}

func parseCaps(c protocol.ClientCapabilities) clientCaps {
	var caps clientCaps
	if w := c.Workspace; w != nil && w.ApplyEdit != nil && *w.ApplyEdit {
		caps.applyEdit = true
		caps.versionedEdits = w.WorkspaceEdit != nil && w.WorkspaceEdit.DocumentChanges != nil && *w.WorkspaceEdit.DocumentChanges
		caps.annotations = caps.versionedEdits && w.WorkspaceEdit.ChangeAnnotationSupport != nil
	}
	if w := c.Window; w != nil && w.WorkDoneProgress != nil {
		caps.workDoneProgress = *w.WorkDoneProgress
	}
	if w := c.Workspace; w != nil && w.Configuration != nil {
		caps.configuration = *w.Configuration
	}
	if w := c.Window; w != nil && w.ShowMessage != nil {
		caps.showMessageRequest = true
		if a := w.ShowMessage.MessageActionItem; a != nil && a.AdditionalPropertiesSupport != nil {
			caps.actionProperties = *a.AdditionalPropertiesSupport
		}
	}
	caps.readLoom(c.Experimental)
	return caps
}

// readLoom reads experimental.loom, what our own clients declare.
func (caps *clientCaps) readLoom(experimental protocol.LSPAny) {
	if len(experimental) == 0 {
		return
	}
	var exp struct {
		Loom *struct {
			SaveDocuments  bool   `json:"saveDocuments"`
			Elicit         bool   `json:"elicit"`
			Thoughts       bool   `json:"thoughts"`
			WorkspaceTrust bool   `json:"workspaceTrust"`
			Review         bool   `json:"review"`
			UserSettings   bool   `json:"userSettings"`
			Diagnostics    bool   `json:"diagnostics"`
			TrustCommand   string `json:"trustCommand"`
		} `json:"loom"`
	}
	if json.Unmarshal(experimental, &exp) != nil || exp.Loom == nil {
		return
	}
	caps.loom = true
	caps.saveDocuments = exp.Loom.SaveDocuments
	caps.elicit = exp.Loom.Elicit
	caps.thoughts = exp.Loom.Thoughts
	caps.workspaceTrust = exp.Loom.WorkspaceTrust
	caps.review = exp.Loom.Review
	caps.userSettings = exp.Loom.UserSettings
	caps.diagnostics = exp.Loom.Diagnostics
	caps.trustCommand = exp.Loom.TrustCommand
}

// initialize answers the initialize request: it records the client's
// capabilities, folders and initializationOptions, and advertises ours.
// Sessions start at initialized.
func (s *Server) initialize(_ context.Context, raw jsonrpc2.RawMessage) (any, error) {
	var p protocol.InitializeParams
	if err := decodeParams(protocol.MethodInitialize, raw, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != lcNew {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "initialize: the server is already initialized")
	}
	s.state = lcInitialized
	s.caps = parseCaps(p.Capabilities)
	s.caps.knownAsker = answersRequests(p.ClientInfo.Name)
	// The settings are asked for at initialized; until they arrive no
	// folder's first trust is recorded without them.
	s.settingsPending = s.caps.configuration
	if s.settingsPending {
		s.firstSettings = make(chan struct{})
	}
	if len(p.InitializationOptions) > 0 {
		s.initOpts = append([]byte(nil), p.InitializationOptions...)
	}
	s.initFolders = nil
	if folders, ok := p.WorkspaceFolders.Get(); ok && len(folders) > 0 {
		for _, f := range folders {
			s.initFolders = append(s.initFolders, f.URI)
		}
	} else if p.RootURI != nil && *p.RootURI != "" {
		s.initFolders = []uri.URI{*p.RootURI}
	}
	s.log.Info("initialize", "client", p.ClientInfo.Name, "folders", len(s.initFolders),
		"loom", s.caps.loom, "applyEdit", s.caps.applyEdit, "progress", s.caps.workDoneProgress)

	incremental := protocol.TextDocumentSyncKindIncremental
	yes := true
	res := &protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			TextDocumentSync: &protocol.TextDocumentSyncOptions{OpenClose: &yes, Change: &incremental, Save: &protocol.SaveOptions{}},
			CodeActionProvider: &protocol.CodeActionOptions{
				CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix, protocol.CodeActionKindRefactor},
			},
			ExecuteCommandProvider: protocol.ExecuteCommandOptions{Commands: commandNames()},
			Workspace: &protocol.WorkspaceOptions{
				WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{
					Supported: &yes, ChangeNotifications: protocol.Boolean(true),
				},
			},
		},
		ServerInfo: protocol.ServerInfo{Name: "loom-lsp", Version: protocol.NewOptional(s.opts.Version)},
	}
	return s.inline.initialize(res, raw, s.initFolders, s.initOpts, s.caps.workspaceTrust)
}

// initialized loads the configuration layers and starts one session per
// workspace folder (or for rootUri when there are none).
func (s *Server) initialized(_ context.Context, _ jsonrpc2.RawMessage) error {
	s.mu.Lock()
	folders := s.initFolders
	s.initFolders = nil
	pull := s.caps.configuration
	s.mu.Unlock()
	s.applyOverrides()
	if pull {
		s.pullSettings()
	}
	var errs []error
	for _, u := range folders {
		if err := s.addFolder(u); err != nil {
			errs = append(errs, err)
		}
	}
	if len(folders) == 0 {
		s.showMessage(protocol.MessageTypeWarning, "loom-lsp: no workspace folder is open; Loom needs one to work in")
	}
	for _, err := range errs {
		s.showMessage(protocol.MessageTypeError, "loom-lsp: "+err.Error())
	}
	s.inline.started()
	return nil
}

// addFolder starts the session of a folder URI.
func (s *Server) addFolder(u uri.URI) error {
	path, err := uriPath(u)
	if err != nil {
		return fmt.Errorf("workspace folder: %w", err)
	}
	if _, err := s.host.AddFolder(path); err != nil {
		return err
	}
	return nil
}

// shutdown answers shutdown: later requests are refused and the sessions
// are stopped (turns cancelled, processes killed). The process exits at
// exit.
func (s *Server) shutdown(_ context.Context, _ jsonrpc2.RawMessage) (any, error) {
	// handleCall has set lcShutdown already, on the read goroutine.
	s.host.Close()
	return nil, nil
}

// exit ends the server: exit code 0 after shutdown, 1 otherwise.
func (s *Server) exit(_ context.Context, _ jsonrpc2.RawMessage) error {
	s.mu.Lock()
	code := 1
	if s.state == lcShutdown {
		code = 0
	}
	s.mu.Unlock()
	s.finish(code)
	return nil
}

package jsonrpc

import (
	"context"
)

// MCPResource is a resource, or a resource template, of a ready MCP
// server: what an "@" menu offers to attach.
type MCPResource struct {
	Server string `json:"server"`
	// URI is the resource's; empty for a template.
	URI string `json:"uri,omitempty"`
	// Template is a resource template's URI template (RFC 6570): attach
	// it with a value for each of its Variables.
	Template  string   `json:"template,omitempty"`
	Variables []string `json:"variables,omitempty"`
	// Name is the server's name for it; Title the one to show, if any.
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Size in bytes, when the server says it.
	Size int64 `json:"size,omitempty"`
}

// MCPResourcesResult is loom.mcpResources' reply.
type MCPResourcesResult struct {
	// Resources are by server, resources before templates, in each
	// server's order; empty when no ready server offers any.
	Resources []MCPResource `json:"resources"`
}

// runMCPResources lists what the folder's MCP servers offer to attach.
func (h commandHandler) runMCPResources(_ context.Context, a FolderArgs) (any, error) {
	f, err := h.s.folder(CmdMCPResources, a.URI)
	if err != nil {
		return nil, err
	}
	out := &MCPResourcesResult{Resources: []MCPResource{}}
	for _, r := range f.MCPResources() {
		out.Resources = append(out.Resources, MCPResource{Server: r.Server, URI: r.URI, Template: r.Template, Variables: r.Variables,
			Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, Size: r.Size})
	}
	return out, nil
}

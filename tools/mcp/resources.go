package mcp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// The user attaches a server's resource to a prompt (an "@" item in an
// editor, loom.ask's context): Resources lists what the ready servers
// offer, resources and resource templates; ReadResource reads one
// through its server (resources/read), a template filled in with the
// user's values first.

// Resource is a resource, or a resource template, a ready server offers.
type Resource struct {
	Server string `json:"server"`
	// URI is the resource's URI; for a template, empty (see Template).
	URI string `json:"uri,omitempty"`
	// Template is a resource template's URI template (RFC 6570), whose
	// Variables the user fills in.
	Template  string   `json:"template,omitempty"`
	Variables []string `json:"variables,omitempty"`
	// Name is the server's name for it; Title, when the server gives
	// one, is the name to show.
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Size is the resource's size in bytes when the server says it.
	Size int64 `json:"size,omitempty"`
}

// Resources lists the resources and resource templates of the ready
// servers: by server, then resources before templates, each in the
// server's order.
func (m *Manager) Resources() []Resource {
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	for name, srv := range m.servers {
		if srv.state == StateReady {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []Resource
	for _, name := range names {
		srv := m.servers[name]
		for _, r := range srv.resources {
			out = append(out, Resource{Server: name, URI: r.URI, Name: r.Name, Title: r.Title,
				Description: r.Description, MIMEType: r.MIMEType, Size: r.Size})
		}
		for _, t := range srv.templates {
			r := Resource{Server: name, Template: t.URITemplate, Name: t.Name, Title: t.Title,
				Description: t.Description, MIMEType: t.MIMEType}
			if tp, err := uritemplate.New(t.URITemplate); err == nil {
				r.Variables = tp.Varnames()
			}
			out = append(out, r)
		}
	}
	return out
}

// ResourceRef names a resource to read: its URI, or a template of the
// server and the values of its variables.
type ResourceRef struct {
	Server    string
	URI       string
	Template  string
	Arguments map[string]string
}

// ErrResource marks a reference that cannot be read as given (no such
// server, a template's missing value): the caller's mistake.
var ErrResource = errors.New("bad resource")

// Expand is the URI the reference names: its URI, or its template filled
// in. Every variable of the template needs a value.
func (r ResourceRef) Expand() (string, error) {
	if r.Template == "" {
		if r.URI == "" {
			return "", fmt.Errorf("%w: a resource needs its uri (or a template and its arguments)", ErrResource)
		}
		return r.URI, nil
	}
	tp, err := uritemplate.New(r.Template)
	if err != nil {
		return "", fmt.Errorf("%w: template %q: %v", ErrResource, r.Template, err)
	}
	vals := uritemplate.Values{}
	var missing []string
	for _, v := range tp.Varnames() {
		val, ok := r.Arguments[v]
		if !ok || val == "" {
			missing = append(missing, v)
			continue
		}
		vals.Set(v, uritemplate.String(val))
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%w: template %s needs %s", ErrResource, r.Template, strings.Join(missing, ", "))
	}
	return tp.Expand(vals)
}

// ReadResource reads the resource ref names through its server
// (resources/read, within the server's call timeout) and returns its
// URI and its contents as text, at most max bytes (the rest cut and
// said); binary contents are described, not included.
func (m *Manager) ReadResource(ctx context.Context, ref ResourceRef, max int) (uri, text string, err error) {
	uri, err = ref.Expand()
	if err != nil {
		return "", "", err
	}
	m.mu.Lock()
	srv := m.servers[ref.Server]
	m.mu.Unlock()
	if srv == nil {
		return "", "", fmt.Errorf("%w: no MCP server %q", ErrResource, ref.Server)
	}
	cs, state := srv.currentSession()
	if cs == nil {
		return "", "", fmt.Errorf("MCP server %q is %s", ref.Server, state)
	}
	ctx, cancel := context.WithTimeout(ctx, srv.timeout())
	defer cancel()
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return "", "", fmt.Errorf("MCP server %q: read %s: %w", ref.Server, uri, err)
	}
	var parts []string
	for _, c := range res.Contents {
		switch {
		case c == nil:
		case len(res.Contents) == 1 && c.Text != "":
			parts = append(parts, c.Text) // the common case: the text alone
		default:
			parts = append(parts, embedded(c))
		}
	}
	text = strings.Join(parts, "\n")
	if max > 0 && len(text) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + fmt.Sprintf("\n[… %d more bytes of %s not attached]", len(text)-cut, uri)
	}
	return uri, text, nil
}

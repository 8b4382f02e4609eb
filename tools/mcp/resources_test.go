package mcp

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// The real server-everything's resources and resource templates, as the
// user attaches them: listed with the template's variables, read through
// the server (a template filled in first), bounded, and the caller's
// mistakes named.
func TestEverythingResourcesToAttach(t *testing.T) {
	m := newManager(t, everything(t, "ev"))
	waitUntil(t, m, "the resources", func() bool { return len(m.Resources()) > 0 })
	var static, tmpl *Resource
	all := m.Resources()
	for i, r := range all {
		if static == nil && strings.HasPrefix(r.URI, "demo://resource/static/document/") {
			static = &all[i]
		}
		if r.Template == "demo://resource/dynamic/text/{resourceId}" {
			tmpl = &all[i]
		}
	}
	if static == nil || tmpl == nil || static.Server != "ev" || !slices.Equal(tmpl.Variables, []string{"resourceId"}) {
		t.Fatalf("resources = %+v, want a static document and the text template with its variable", all)
	}
	ctx := context.Background()
	uri, text, err := m.ReadResource(ctx, ResourceRef{Server: "ev", URI: static.URI}, 0)
	if err != nil || uri != static.URI || len(text) < 100 || strings.HasPrefix(text, "[resource") {
		t.Errorf("read %s = %q, %q, %v; want its text alone", static.URI, uri, text, err)
	}
	uri, text, err = m.ReadResource(ctx, ResourceRef{Server: "ev", Template: tmpl.Template, Arguments: map[string]string{"resourceId": "7"}}, 0)
	if err != nil || uri != "demo://resource/dynamic/text/7" || !strings.HasPrefix(text, "Resource 7: This is a plaintext resource") {
		t.Errorf("template read = %q, %q, %v", uri, text, err)
	}
	_, text, err = m.ReadResource(ctx, ResourceRef{Server: "ev", URI: static.URI}, 40)
	if err != nil || !strings.Contains(text, "more bytes of "+static.URI+" not attached]") || len(text) > 40+100 {
		t.Errorf("bounded read = %q, %v", text, err)
	}
	for _, bad := range []ResourceRef{
		{Server: "ev", Template: tmpl.Template},
		{Server: "nope", URI: static.URI},
		{Server: "ev"},
	} {
		if _, _, err := m.ReadResource(ctx, bad, 0); !errors.Is(err, ErrResource) {
			t.Errorf("ReadResource(%+v) = %v, want ErrResource", bad, err)
		}
	}
	if _, _, err := m.ReadResource(ctx, ResourceRef{Server: "ev", URI: "demo://nowhere/x"}, 0); err == nil || errors.Is(err, ErrResource) {
		t.Errorf("a resource the server does not have: %v, want the server's error", err)
	}
}

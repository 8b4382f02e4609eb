package fetch

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/loom-lsp/loom-lsp/tools"
)

//go:embed fetch.md
var description string

// Name is the fetch tool's name, as the model calls it.
const Name = "fetch"

// Tool is the fetch tool. Its Settings are the user's; the caller has
// already decided that the call may run (tools.fetch, approval rules).
type Tool struct {
	Settings *Settings
}

// Params are the model's arguments.
type Params struct {
	URL string `json:"url"`
}

// Name implements tools.Tool.
func (Tool) Name() string { return Name }

// Description implements tools.Tool.
func (Tool) Description() string { return description }

// Mutating implements tools.Tool: fetch changes nothing in the workspace.
func (Tool) Mutating() bool { return false }

// Schema implements tools.Tool.
func (Tool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"url":{"type":"string","description":"the http or https URL to fetch"}},` +
		`"required":["url"],"additionalProperties":false}`)
}

// ParseArgs decodes the model's arguments strictly.
func ParseArgs(args json.RawMessage) (Params, error) {
	var p Params
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("invalid arguments: %v", err)
	}
	if strings.TrimSpace(p.URL) == "" {
		return p, errors.New(`invalid arguments: "url" is required`)
	}
	return p, nil
}

// Host names the host a call would reach ("docs.example.com"), for
// approvals and rules; "" when the arguments hold no usable URL.
func Host(args json.RawMessage) string {
	p, err := ParseArgs(args)
	if err != nil {
		return ""
	}
	u, err := url.Parse(strings.TrimSpace(p.URL))
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// Run implements tools.Tool.
func (t Tool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	p, err := ParseArgs(args)
	if err != nil {
		return failed("fetch: %v", err), nil
	}
	s := t.Settings
	if s == nil {
		s = &Settings{}
	}
	page, err := Fetch(ctx, s, p.URL)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		return failed("fetch %s: %v", p.URL, err), nil
	}
	return Result(page), nil
}

// Result is what the model reads of page.
func Result(page *Page) tools.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\nStatus: %s\n", page.FinalURL, page.StatusText)
	if page.Redirect != "" {
		fmt.Fprintf(&b, "Redirected to another host, not followed: %s\nFetch that URL in another call if you need it.\n", page.Redirect)
		return tools.Result{Text: b.String(), Summary: fmt.Sprintf("%s → redirect to %s", hostOf(page.FinalURL), page.Redirect)}
	}
	fmt.Fprintf(&b, "Type: %s\n", page.ContentType)
	if page.Cut {
		fmt.Fprintf(&b, "Cut: yes (%d of %d bytes of text shown)\n", len(page.Text), page.FullLen)
	} else {
		b.WriteString("Cut: no\n")
	}
	if page.Revalidated {
		b.WriteString("Cache: unchanged since the last fetch (304), served from the cache\n")
	}
	if page.Note != "" {
		fmt.Fprintf(&b, "Note: %s\n", page.Note)
	}
	b.WriteString("\n")
	b.WriteString(Wrap(page.FinalURL, page.Text))
	summary := fmt.Sprintf("%s: %s, %s, %d bytes", hostOf(page.FinalURL), page.StatusText, page.ContentType, page.Bytes)
	if page.Cut {
		summary += " (cut)"
	}
	res := tools.Result{Text: b.String(), Summary: summary}
	if page.Status >= 400 {
		res.IsError = true
		res.Text = "tool error: the server answered " + page.StatusText + "\n" + res.Text
	}
	return res
}

func failed(format string, args ...any) tools.Result {
	msg := fmt.Sprintf(format, args...)
	summary := msg
	if i := strings.IndexByte(summary, '\n'); i >= 0 {
		summary = summary[:i]
	}
	return tools.Result{Text: "tool error: " + msg, IsError: true, Summary: summary}
}

func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}

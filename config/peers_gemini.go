package config

import (
	"fmt"
	"maps"
	"regexp"
)

// Gemini CLI's settings.json (~/.gemini/settings.json, the repository's
// .gemini/settings.json): "mcpServers" as Claude Code's, with httpUrl for
// streamable HTTP (url is SSE there), $VAR and ${VAR} in any string,
// timeout in milliseconds, and trust (no confirmation), which only the
// user's own file may give: a repository's trust is ignored, as any
// widening from a repository is. Top-level mcp.allowed and mcp.excluded
// are followed.

// bareVarRE matches $NAME (Gemini CLI's other way to write ${NAME}).
var bareVarRE = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)

// geminiVars rewrites $NAME as ${NAME} in every string of v.
func geminiVars(v any) any {
	switch x := v.(type) {
	case string:
		return bareVarRE.ReplaceAllString(x, "$${$1}")
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = geminiVars(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = geminiVars(e)
		}
		return out
	}
	return v
}

// mapGeminiServer maps a Gemini CLI server entry to loom's keys, or says
// why not. repo: the entry is the repository's (its trust is ignored).
func mapGeminiServer(v map[string]any, m mapCtx, repo bool) (map[string]any, string) {
	if _, bad := v["\x00bad"]; bad {
		return nil, "its entry is not an object"
	}
	v = geminiVars(v).(map[string]any)
	for _, k := range []string{"includeTools", "excludeTools"} {
		if _, ok := v[k]; ok {
			return nil, fmt.Sprintf("it sets %s, which loom cannot apply (it would offer every tool of the server): define the server in loom.toml", k)
		}
	}
	if t, _ := v["authProviderType"].(string); t != "" && t != "dynamic_discovery" {
		return nil, fmt.Sprintf("it signs in with authProviderType %q, which loom does not (loom signs in by the server's OAuth metadata)", t)
	}
	if cwd, ok := v["cwd"].(string); ok && cwd != "" {
		return nil, "it sets cwd, and loom starts a server in the workspace folder: define it in loom.toml without cwd"
	}
	var raw map[string]any
	var why string
	switch {
	case v["httpUrl"] != nil:
		w := maps.Clone(v)
		w["url"] = v["httpUrl"]
		r := &entryReader{v: w, m: m}
		raw, why = mapURL(w, m, r.str)
	case v["command"] != nil:
		r := &entryReader{v: v, m: m}
		raw, why = r.mapStdio(), r.why
	case v["url"] != nil:
		return nil, "its url is an SSE endpoint (Gemini CLI's httpUrl is streamable HTTP); loom speaks streamable HTTP: use the server's streamable HTTP URL as httpUrl"
	default:
		return nil, "it has no command, httpUrl or url"
	}
	if why != "" {
		return nil, why
	}
	if t, ok := toFloat(v["timeout"]); ok && t > 0 {
		raw["timeout"] = fmt.Sprintf("%gms", t)
	}
	if trust, _ := v["trust"].(bool); trust && !repo {
		raw["approve"] = string(PolicyAllow)
	}
	return raw, ""
}

// geminiFilter applies settings.json's top-level mcp.allowed (only
// those, when set) and mcp.excluded to its servers.
func geminiFilter(top map[string]any, servers map[string]any) map[string]any {
	mcp, _ := top["mcp"].(map[string]any)
	if mcp == nil {
		return servers
	}
	list := func(key string) (map[string]bool, bool) {
		l, ok := mcp[key].([]any)
		set := map[string]bool{}
		for _, e := range l {
			if s, ok := e.(string); ok {
				set[s] = true
			}
		}
		return set, ok
	}
	allowed, hasAllowed := list("allowed")
	excluded, _ := list("excluded")
	out := map[string]any{}
	for name, s := range servers {
		if excluded[name] || hasAllowed && !allowed[name] {
			continue
		}
		out[name] = s
	}
	return out
}

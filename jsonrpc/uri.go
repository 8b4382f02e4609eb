package jsonrpc

import (
	"fmt"
	"path/filepath"

	"go.lsp.dev/uri"
)

// uriPath returns the absolute file path of a file: URI.
func uriPath(u uri.URI) (string, error) {
	if u == "" {
		return "", fmt.Errorf("empty uri")
	}
	parsed, err := uri.Parse(string(u))
	if err != nil {
		return "", fmt.Errorf("uri %q: %w", string(u), err)
	}
	if !parsed.IsFile() {
		return "", fmt.Errorf("uri %q: only file: URIs are supported", string(u))
	}
	p := parsed.FsPath()
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("uri %q: not an absolute path", string(u))
	}
	return filepath.Clean(p), nil
}

// pathURI returns the file: URI of an absolute path.
func pathURI(path string) uri.URI { return uri.File(path) }

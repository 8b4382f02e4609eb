// Command generate writes the reference pages of docs/ that are generated
// from the code, as gopls's doc/generate does: docs/reference/config.md
// from the config package's types and their doc comments, and
// docs/reference/exec-jsonl.md from jsonrpc/headless's JSON Schema and
// the event types its Go code writes.
//
//	go generate ./docs/...
//
// The package's tests fail when a page differs from what this command
// writes now (a key, a doc comment or an event added without
// regenerating), and when a relative link of the repository's Markdown
// files does not resolve.
package main

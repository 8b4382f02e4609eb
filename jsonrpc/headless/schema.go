package headless

import _ "embed"

// Schema is the JSON Schema (draft 2020-12) of every JSONL event, kept in
// schema.json next to this file and published in README.md.
//
//go:embed schema.json
var Schema []byte

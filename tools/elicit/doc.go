// Package elicit reads an MCP server's question to the user
// (elicitation, MCP 2025-11-25 and 2026-07-28): the form its requested
// schema describes (flat string, number, integer, boolean and enum
// fields, with required, defaults, titles and descriptions), the check of
// what the user typed against that schema, and what of the answer may be
// shown: a sensitive field (format "password", or a name such as token,
// secret, key or password) is masked in every display and journal.
//
// It is pure: no I/O. The MCP client (tools/mcp) builds a Request from
// the server's elicitation/create; the conversation (workspace) asks the
// user through its front end, checks the answer with Check, asks again
// with the problems when the answer does not fit, and records Shown.
package elicit

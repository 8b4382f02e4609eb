// Package wiregen generates what mirrors loom-lsp's LSP wire protocol
// outside Go: the TypeScript wire types of the VS Code extension
// (editors/vscode/src/wire.gen.ts), the Lua annotations of the Neovim
// plugin (editors/neovim/lua/loom/wire.lua) and the protocol reference
// (docs/reference/protocol.md). It reads the Go wire types by reflection
// from jsonrpc's command table (jsonrpc.WireCommands) and message table
// (jsonrpc.WireMessages), and their doc comments from the source, as
// gopls generates its protocol and documentation. Run it with
// `go generate ./jsonrpc`; TestGeneratedFilesAreCurrent fails when the
// committed files differ from what it makes now.
package wiregen

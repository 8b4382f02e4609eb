package agenthooks

import "strings"

// The tool-name mapping: a hook's matcher is matched against each of a
// loom tool's names in the hook's format, and the input names the tool
// by the first of them (what the format's scripts compare tool_name
// with). loom's own name always matches too.
//
//	loom         Claude Code / Codex / loom   VS Code              Copilot CLI
//	bash         Bash                         Bash, runInTerminal  bash
//	edit_file    Edit, MultiEdit (apply_patch) Edit, editFiles     edit
//	write_file   Write (apply_patch)          Write, createFile    create
//	read_file    Read                         Read, readFile       view
//	grep         Grep                         Grep                 grep
//	list_files   Glob, LS                     Glob, LS             glob
//	srv__tool    mcp__srv__tool               mcp__srv__tool       mcp__srv__tool
var claudeNames = map[string][]string{
	"bash":       {"Bash"},
	"edit_file":  {"Edit", "MultiEdit"},
	"write_file": {"Write"},
	"read_file":  {"Read"},
	"grep":       {"Grep"},
	"list_files": {"Glob", "LS"},
}

var extraNames = map[Format]map[string][]string{
	FormatCodex: {
		"edit_file":  {"apply_patch"},
		"write_file": {"apply_patch"},
	},
	FormatVSCode: {
		"bash":       {"runInTerminal", "run_in_terminal"},
		"edit_file":  {"editFiles", "replace_string_in_file"},
		"write_file": {"createFile", "create_file"},
		"read_file":  {"readFile", "read_file"},
	},
}

var copilotNames = map[string]string{
	"bash": "bash", "edit_file": "edit", "write_file": "create", "read_file": "view", "grep": "grep", "list_files": "glob",
}

// mcpPrefix marks an MCP tool in Claude Code's names.
const mcpPrefix = "mcp__"

// ToolAliases returns the names a loom tool goes by in format f, the
// name the format's input gives it first, loom's own last.
func ToolAliases(tool string, f Format) []string {
	var out []string
	if f == FormatCopilot {
		if n, ok := copilotNames[tool]; ok {
			out = append(out, n)
		}
	} else {
		out = append(out, claudeNames[tool]...)
		out = append(out, extraNames[f][tool]...)
	}
	if strings.Contains(tool, "__") && !strings.HasPrefix(tool, mcpPrefix) {
		out = append(out, mcpPrefix+tool) // an MCP server's tool
	}
	return append(out, tool)
}

// InputToolName is the name a hook of format f is given for tool.
func InputToolName(tool string, f Format) string { return ToolAliases(tool, f)[0] }

package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// write creates dir/name with text and returns its path.
func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readFile returns the text of path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// isolate points the default user file at an empty temp dir.
func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	// The peers' user-level MCP files (~/.claude.json, …) are read from
	// HOME: none here.
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("CODEX_HOME", "")
	return dir
}

func TestDefaults(t *testing.T) {
	isolate(t)
	d := Default()
	checks := []struct {
		name      string
		got, want any
	}{
		{"provider", d.Model.Provider, ProviderOpenAI},
		{"base_url", d.Model.BaseURL, DefaultBaseURL},
		{"name", d.Model.Name, ""},
		{"api_key_env", d.Model.APIKeyEnv, "OPENAI_API_KEY"},
		{"idle_timeout", d.Model.IdleTimeout.Duration, 60 * time.Second},
		{"first_byte_timeout", d.Model.FirstByteTimeout.Duration, 20 * time.Second},
		{"temperature", d.Model.Temperature, (*float64)(nil)},
		{"max_retries", d.Agent.MaxRetries, 3},
		{"max_iterations", d.Agent.MaxIterations, 25},
		{"bash", d.Tools.Bash, PolicyAsk},
		{"edits", d.Tools.Edits, EditsAuto},
		{"bash_timeout", d.Tools.BashTimeout.Duration, 2 * time.Minute},
		{"bash_max_timeout", d.Tools.BashMaxTimeout.Duration, 10 * time.Minute},
		{"max_output_bytes", d.Tools.MaxOutputBytes, 64 * 1024},
		{"elide_after_turns", d.Agent.ElideAfterTurns, 3},
		{"auto_commit", d.Hooks.AutoCommit, true},
		{"attribution", d.Hooks.Attribution, true},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if err := d.Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
	got, sources, err := Load(LoadOptions{Folder: t.TempDir()})
	if err != nil {
		t.Fatalf("Load with no files: %v", err)
	}
	if len(sources) != 0 {
		t.Errorf("sources = %v, want none", sources)
	}
	got.origins, got.trust = nil, trustState{}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("Load with no files = %v\nwant %v", got, d)
	}
}

func TestPrecedence(t *testing.T) {
	isolate(t)
	home := t.TempDir()
	folder := t.TempDir()
	user := write(t, home, "user.toml", `
[model]
name = "user-model"
base_url = "http://user:1/v1"
headers = { A = "user", B = "user" }
[agent]
max_retries = 7
[tools]
bash = "deny"
bash_timeout = "1m"
`)
	user = write(t, home, "user.toml", fmt.Sprintf("[trust]\nfolders = [%q]\n", folder)+readFile(t, user))
	ws := write(t, folder, ".loom.toml", `
model.name = "ws-model"
model.headers.B = "ws"
[tools]
bash_timeout = "3m"
bash = "allow"
`)
	write(t, folder, "loom.toml", "[model]\nname = \"shadowed\"\n") // .loom.toml wins
	c, sources, err := Load(LoadOptions{
		UserFile: user,
		Folder:   folder,
		Overrides: []Override{
			{Name: "initializationOptions", JSON: []byte(`{"tools": {"bash": "ask"}, "agent": {"max_iterations": 9}}`)},
			{Name: "didChangeConfiguration", JSON: []byte(`{"agent": {"max_iterations": 11, "max_retries": null}, "model": {"temperature": 0.5}}`)},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		key       string
		got, want any
	}{
		{"model.name (workspace over user)", c.Model.Name, "ws-model"},
		{"model.base_url (user only)", c.Model.BaseURL, "http://user:1/v1"},
		{"model.headers (merged per key)", c.Model.Headers, map[string]string{"A": "user", "B": "ws"}},
		{"model.temperature (override)", *c.Model.Temperature, 0.5},
		{"model.api_key_env (default)", c.Model.APIKeyEnv, "OPENAI_API_KEY"},
		{"agent.max_retries (user; null leaves it)", c.Agent.MaxRetries, 7},
		{"agent.max_iterations (later override)", c.Agent.MaxIterations, 11},
		{"tools.bash (override over workspace over user)", c.Tools.Bash, PolicyAsk},
		{"tools.bash_timeout (workspace)", c.Tools.BashTimeout.Duration, 3 * time.Minute},
		{"tools.bash_max_timeout (default)", c.Tools.BashMaxTimeout.Duration, 10 * time.Minute},
		{"hooks.auto_commit (default)", c.Hooks.AutoCommit, true},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %v, want %v", ch.key, ch.got, ch.want)
		}
	}
	wantSources := []Source{
		{SourceUser, user},
		{SourceWorkspace, ws},
		{SourceOverride, "initializationOptions"},
		{SourceOverride, "didChangeConfiguration"},
	}
	if !reflect.DeepEqual(sources, wantSources) {
		t.Errorf("sources = %v, want %v", sources, wantSources)
	}
}

func TestWorkspaceFallbackAndExplicit(t *testing.T) {
	xdg := isolate(t)
	write(t, xdg, "loom/loom.toml", "[agent]\nmax_retries = 5\n[model]\nname = \"xdg\"\n")
	folder := t.TempDir()
	ws := write(t, folder, "loom.toml", "[agent]\nelide_after_turns = 4\n")
	c, sources, err := Load(LoadOptions{Folder: folder})
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent.MaxRetries != 5 || c.Model.Name != "xdg" || c.Agent.ElideAfterTurns != 4 {
		t.Errorf("XDG user file or loom.toml fallback not applied: %+v", c.Agent)
	}
	if len(sources) != 2 || sources[0].Name != filepath.Join(xdg, "loom", "loom.toml") || sources[1].Name != ws {
		t.Errorf("sources = %v", sources)
	}

	explicit := write(t, t.TempDir(), "cli.toml", "[model]\nname = \"cli\"\n")
	c, _, err = Load(LoadOptions{ExplicitFile: explicit})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.Name != "cli" || c.Agent.MaxRetries != 3 {
		t.Errorf("--config did not replace the user file: name %q, max_retries %d", c.Model.Name, c.Agent.MaxRetries)
	}
	missing := filepath.Join(t.TempDir(), "nope.toml")
	_, _, err = Load(LoadOptions{ExplicitFile: missing})
	var e *Error
	if !errors.As(err, &e) || e.Source != missing {
		t.Errorf("missing --config file: err = %v, want an *Error naming %s", err, missing)
	}
	// A missing non-explicit user file is fine.
	if _, _, err := Load(LoadOptions{UserFile: missing}); err != nil {
		t.Errorf("missing user file: %v", err)
	}
}

func TestXDGConfigHome(t *testing.T) {
	xdg := isolate(t)
	if got, want := DefaultUserFile(), filepath.Join(xdg, "loom", "loom.toml"); got != want {
		t.Errorf("DefaultUserFile() = %q, want %q", got, want)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	if got, want := DefaultUserFile(), filepath.Join(home, ".config", "loom", "loom.toml"); got != want {
		t.Errorf("without XDG: DefaultUserFile() = %q, want %q", got, want)
	}
	folder := "/w"
	want := []string{filepath.Join(home, ".config", "loom", "loom.toml"), "/w/.loom.toml", "/w/loom.toml"}
	if got := (LoadOptions{Folder: folder, NoPeerFiles: true}).Files(); !reflect.DeepEqual(got, want) {
		t.Errorf("Files() = %v, want %v", got, want)
	}
	// The peers' MCP files are watched too.
	if got := (LoadOptions{Folder: folder}).Files(); !slices.Contains(got, "/w/.mcp.json") || !slices.Contains(got, filepath.Join(home, ".claude.json")) {
		t.Errorf("Files() = %v, want the peers' MCP files too", got)
	}
	if got := (LoadOptions{ExplicitFile: "/c.toml", NoPeerFiles: true}).Files(); !reflect.DeepEqual(got, []string{"/c.toml"}) {
		t.Errorf("Files() with --config = %v", got)
	}
}

func TestFileErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // each line of the error after "<path>"
	}{
		{"unknown key", "[model]\nname = \"x\"\nnmae = \"y\"\n", []string{`:3: unknown key "model.nmae"`}},
		{"unknown section", "# c\n[modle]\nname = \"x\"\n", []string{`:2: unknown key "modle"`}},
		{"unknown dotted key", "[model]\nname = \"x\"\n\n[tools]\nbash.mode = \"ask\"\n", []string{`:5: tools.bash: want a string, got a table`}},
		{"unknown key in dotted table", "agent.max_retries = 1\nagent.retries = 2\n", []string{`:2: unknown key "agent.retries"`}},
		{"several unknown keys, in line order", "[tools]\nzz = 1\n[hooks]\naa = 2\n", []string{`:2: unknown key "tools.zz"`, `:4: unknown key "hooks.aa"`}},
		{"wrong type int", "[agent]\n\nmax_retries = \"three\"\n", []string{`:3: agent.max_retries: want an integer, got string "three"`}},
		{"wrong type bool", "[hooks]\nauto_commit = \"yes\"\n", []string{`:2: hooks.auto_commit: want a boolean, got string "yes"`}},
		{"wrong type section", "model = 3\n", []string{`:1: model: want a table, got integer 3`}},
		{"wrong type duration", "[tools]\nbash_timeout = 30\n", []string{`:2: tools.bash_timeout: want a string such as "30s", got integer 30`}},
		{"bad duration", "[tools]\nbash_timeout = \"30 parsecs\"\n", []string{`:2: tools.bash_timeout: invalid duration "30 parsecs"`}},
		{"header value in inline table", "[model]\nheaders = { A = 1 }\n", []string{`:2: model.headers.A: want a string, got integer 1`}},
		{"key after multi-line string", "[agent]\nsystem_prompt = \"\"\"\nBe brief.\nnmae = 1\n\"\"\"\nnmae = 2\n", []string{`:6: unknown key "agent.nmae"`}},
		{"quoted key", "[model]\n\"na me\" = 1\n", []string{`:2: unknown key "model.na me"`}},
		{"malformed", "[model]\nname = \"x\"\nbase_url = \n", []string{`:3: invalid TOML: `}},
		{"malformed header", "[model\n", []string{`:1: invalid TOML: `}},
		{"validation names file and line", "[tools]\n\nbash = \"maybe\"\n", []string{`:3: tools.bash: invalid policy "maybe"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			folder := t.TempDir()
			path := write(t, folder, ".loom.toml", tt.text)
			_, _, err := Load(LoadOptions{Folder: folder})
			if err == nil {
				t.Fatal("no error")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("error =\n%v\nwant %d line(s)", err, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(lines[i], path+w) {
					t.Errorf("error line %d = %q\nwant prefix %q", i, lines[i], path+w)
				}
			}
			var e *Error
			if !errors.As(err, &e) || e.Source != path {
				t.Errorf("error is not an *Error for %s: %#v", path, err)
			}
		})
	}
}

func TestOverrideErrors(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"unknown key", `{"model": {"nmae": "x"}}`, `initializationOptions: unknown key "model.nmae"`},
		{"unknown section", `{"modle": {}}`, `initializationOptions: unknown key "modle"`},
		{"wrong type", `{"agent": {"max_iterations": "9"}}`, `initializationOptions: agent.max_iterations: want an integer, got string "9"`},
		{"fraction for int", `{"agent": {"max_iterations": 2.5}}`, `initializationOptions: agent.max_iterations: want an integer, got number 2.5`},
		{"not an object", `[1]`, `initializationOptions: invalid JSON object`},
		{"trailing", `{} {}`, `initializationOptions: invalid JSON object: trailing data`},
		{"validation", `{"agent": {"max_iterations": 0}}`, `initializationOptions: agent.max_iterations: must be >= 1, got 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			_, _, err := Load(LoadOptions{Overrides: []Override{{Name: "initializationOptions", JSON: []byte(tt.json)}}})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant prefix %q", err, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		toml  string
		wants []string // substrings of the error; none = valid
	}{
		{"valid", "[model]\nbase_url = \"http://localhost:11434/v1\"\nname = \"q\"\n", nil},
		{"policy", "[tools]\nbash = \"sometimes\"\n", []string{`:2: tools.bash: invalid policy "sometimes"`}},
		{"edit mode", "[tools]\nedits = \"propose\"\n", []string{`:2: tools.edits: invalid edit mode "propose": want "auto" or "review"`}},
		{"plan commands", "[tools]\nplan_commands = \"all\"\n", []string{`:2: tools.plan_commands: invalid value "all": want "off" or "read-only"`}},
		{"plan commands read-only", "[tools]\nplan_commands = \"read-only\"\n", nil},
		{"negative duration", "[model]\nidle_timeout = \"-1s\"\n", []string{`:2: model.idle_timeout: must be a positive duration`}},
		{"zero duration", "[agent]\nretry_base = \"0s\"\n", []string{`:2: agent.retry_base: must be a positive duration`}},
		{"max below timeout", "[tools]\nbash_timeout = \"20m\"\n", []string{`:2: tools.bash_timeout: tools.bash_max_timeout (10m) must be >= tools.bash_timeout (20m)`}},
		{"max below timeout, both set", "[tools]\nbash_timeout = \"5m\"\nbash_max_timeout = \"1m\"\n", []string{`:3: tools.bash_max_timeout: tools.bash_max_timeout (1m)`}},
		{"base_url scheme", "[model]\nbase_url = \"localhost:11434\"\n", []string{`:2: model.base_url: invalid URL "localhost:11434"`}},
		{"base_url ftp", "[model]\nbase_url = \"ftp://x/v1\"\n", []string{`model.base_url: invalid URL`}},
		{"provider", "[model]\nprovider = \"claude\"\n", []string{`:2: model.provider: unknown provider "claude"`}},
		{"provider anthropic", "[model]\nprovider = \"anthropic\"\nname = \"claude-sonnet-4-5\"\nreasoning_effort = \"high\"\n", nil},
		{"api messages", "[model]\nbase_url = \"http://localhost:11434\"\nname = \"qwen3\"\napi = \"messages\"\n", nil},
		{"iterations", "[agent]\nmax_iterations = 0\n", []string{`:2: agent.max_iterations: must be >= 1`}},
		{"retries", "[agent]\nmax_retries = -1\n", []string{`:2: agent.max_retries: must be >= 0`}},
		{"script without path", "[model]\nprovider = \"script\"\n", []string{`:2: model.provider: provider "script" requires model.script`}},
		{"output bytes", "[tools]\nmax_output_bytes = 0\n", []string{`:2: tools.max_output_bytes: must be > 0`}},
		{"elision", "[agent]\nelide_after_turns = -1\n", []string{`:2: agent.elide_after_turns: must be >= 0`}},
		{"api", "[model]\nname = \"q\"\napi = \"completions\"\n", []string{`:3: model.api: unknown API "completions"`}},
		{"api responses", "[model]\napi = \"responses\"\nreasoning_effort = \"xhigh\"\n", nil},
		{"reasoning effort", "[model]\nreasoning_effort = \"extreme\"\n", []string{`:2: model.reasoning_effort: unknown effort "extreme": want one of none, minimal, low, medium, high, xhigh, max`}},
		{"several at once", "[agent]\nmax_iterations = 0\nmax_retries = -2\n", []string{"max_iterations", "max_retries"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			path := write(t, t.TempDir(), "loom.toml", tt.toml)
			_, _, err := Load(LoadOptions{ExplicitFile: path})
			if len(tt.wants) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.wants)
			}
			for _, w := range tt.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error = %v\nwant it to contain %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), path+":") {
				t.Errorf("error %q does not start with %s:", err, path)
			}
		})
	}
	// A hand-built Config (no origins) still validates, naming only the key.
	c := Default()
	c.Tools.Bash = "x"
	if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "tools.bash: ") {
		t.Errorf("hand-built Validate = %v", err)
	}
}

// TestAnthropicProviderDefaults: provider "anthropic" goes to Anthropic's
// API with ANTHROPIC_API_KEY unless the file says otherwise.
func TestAnthropicProviderDefaults(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	c, _, err := Load(LoadOptions{ExplicitFile: write(t, dir, "a.toml", "[model]\nprovider = \"anthropic\"\nname = \"claude-sonnet-4-5\"\n")})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.BaseURL != DefaultAnthropicURL || c.Model.APIKeyEnv != "ANTHROPIC_API_KEY" {
		t.Errorf("base_url %q api_key_env %q", c.Model.BaseURL, c.Model.APIKeyEnv)
	}
	if err := c.ModelReady(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("ModelReady without the key = %v", err)
	}
	c, _, err = Load(LoadOptions{ExplicitFile: write(t, dir, "b.toml", "[model]\nprovider = \"anthropic\"\nname = \"qwen3\"\nbase_url = \"http://localhost:11434\"\napi_key_env = \"OLLAMA_KEY\"\n")})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.BaseURL != "http://localhost:11434" || c.Model.APIKeyEnv != "OLLAMA_KEY" {
		t.Errorf("base_url %q api_key_env %q", c.Model.BaseURL, c.Model.APIKeyEnv)
	}
}

func TestScriptPathRelativeToFile(t *testing.T) {
	isolate(t)
	userDir, folder := t.TempDir(), t.TempDir()
	user := write(t, userDir, "loom.toml", "[model]\nprovider = \"script\"\nscript = \"convo.txt\"\n")
	c, _, err := Load(LoadOptions{UserFile: user})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(userDir, "convo.txt"); c.Model.Script != want {
		t.Errorf("script from user file = %q, want %q", c.Model.Script, want)
	}
	write(t, folder, ".loom.toml", "[model]\nscript = \"sub/s.txt\"\n")
	c, _, err = Load(LoadOptions{UserFile: user, Folder: folder, Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(folder, "sub", "s.txt"); c.Model.Script != want {
		t.Errorf("script from workspace file = %q, want %q", c.Model.Script, want)
	}
	c, _, err = Load(LoadOptions{UserFile: user, Folder: folder,
		Overrides: []Override{{Name: "o", JSON: []byte(`{"model":{"script":"/abs/x.txt"}}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.Script != "/abs/x.txt" {
		t.Errorf("absolute script = %q", c.Model.Script)
	}
}

func TestModelReady(t *testing.T) {
	dir := t.TempDir()
	script := write(t, dir, "s.txt", "")
	env := func(vars ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(vars); i += 2 {
				if vars[i] == k {
					return vars[i+1]
				}
			}
			return ""
		}
	}
	tests := []struct {
		name   string
		toml   string
		getenv func(string) string
		wants  []string // substrings; none = ready
	}{
		{"nothing configured", "", env(),
			[]string{"[model] name is not set", `name = "gpt-4.1"`, "OPENAI_API_KEY", `base_url = "http://localhost:11434/v1"`}},
		{"openai without key", "[model]\nname = \"gpt-4.1\"\n", env(),
			[]string{`model "gpt-4.1" at https://api.openai.com/v1 needs an API key`, "export OPENAI_API_KEY=sk-...", "api_key_env", "localhost:11434"}},
		{"openai with key", "[model]\nname = \"gpt-4.1\"\n", env("OPENAI_API_KEY", "sk-x"), nil},
		{"custom key variable unset", "[model]\nname = \"m\"\napi_key_env = \"MY_KEY\"\nbase_url = \"https://openrouter.ai/api/v1\"\n", env("OPENAI_API_KEY", "sk-x"),
			[]string{"MY_KEY is empty", "export MY_KEY=sk-..."}},
		{"custom key variable set", "[model]\nname = \"m\"\napi_key_env = \"MY_KEY\"\n", env("MY_KEY", "k"), nil},
		{"ollama without key is ready", "[model]\nbase_url = \"http://localhost:11434/v1\"\nname = \"qwen2.5-coder\"\n", env(), nil},
		{"ollama without name", "[model]\nbase_url = \"http://localhost:11434/v1\"\n", env(),
			[]string{"no model name for the server at http://localhost:11434/v1", "ollama list"}},
		{"script ready", fmt.Sprintf("[model]\nprovider = \"script\"\nscript = %q\n", script), env(), nil},
		{"script missing file", "[model]\nprovider = \"script\"\nscript = \"gone.txt\"\n", env(), []string{"scripted model", "gone.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			path := write(t, t.TempDir(), "loom.toml", tt.toml)
			c, _, err := Load(LoadOptions{ExplicitFile: path})
			if err != nil {
				t.Fatal(err)
			}
			err = c.ModelReady(tt.getenv)
			if len(tt.wants) == 0 {
				if err != nil {
					t.Fatalf("not ready: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrNoModel) {
				t.Fatalf("err = %v, want ErrNoModel", err)
			}
			for _, w := range tt.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error =\n%v\nwant it to contain %q", err, w)
				}
			}
		})
	}
	// Script provider with no script at all (a hand-built Config).
	c := Default()
	c.Model.Provider = ProviderScript
	if err := c.ModelReady(env()); err == nil || !strings.Contains(err.Error(), `script = "path/to/conversation.txt"`) {
		t.Errorf("script provider without script: %v", err)
	}
}

func TestStringRedactsHeaders(t *testing.T) {
	c := Default()
	temp := 0.2
	c.Model.Temperature = &temp
	c.Model.Headers = map[string]string{"Authorization": "Bearer sk-secret"}
	for _, s := range []string{c.String(), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(s, "sk-secret") {
			t.Errorf("secret leaked: %s", s)
		}
		if !strings.Contains(s, "Authorization") || !strings.Contains(s, `bash_timeout = "2m"`) || !strings.Contains(s, "temperature = 0.2") {
			t.Errorf("String() missing content:\n%s", s)
		}
	}
	if c.Model.Headers["Authorization"] != "Bearer sk-secret" {
		t.Error("String() modified the Config")
	}
}

func TestTrailerFor(t *testing.T) {
	h := Default().Hooks
	if got := h.TrailerFor("gpt-x"); got != "Co-authored-by: loom-lsp (gpt-x) <loom@localhost>" {
		t.Errorf("TrailerFor = %q", got)
	}
	if got := h.TrailerFor(""); got != "Co-authored-by: loom-lsp <loom@localhost>" {
		t.Errorf("TrailerFor without a model = %q", got)
	}
	h.Trailer = ""
	if got := h.TrailerFor("m"); !strings.Contains(got, "(m)") {
		t.Errorf("empty trailer falls back: %q", got)
	}
	h.Attribution = false
	if got := h.TrailerFor("m"); got != "" {
		t.Errorf("attribution off: %q", got)
	}
}

func TestStringRoundTrips(t *testing.T) {
	isolate(t)
	path := write(t, t.TempDir(), "loom.toml", Default().String())
	c, _, err := Load(LoadOptions{ExplicitFile: path})
	if err != nil {
		t.Fatalf("Default().String() does not load back: %v\n%s", err, Default())
	}
	c.origins, c.trust = nil, trustState{}
	if !reflect.DeepEqual(c, Default()) {
		t.Errorf("round trip = %v, want %v", c, Default())
	}
}

func TestDurationText(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{{2 * time.Minute, "2m"}, {time.Hour, "1h"}, {90 * time.Second, "1m30s"}, {time.Hour + time.Second, "1h0m1s"}, {500 * time.Millisecond, "500ms"}} {
		b, _ := Duration{tt.d}.MarshalText()
		var back Duration
		if string(b) != tt.want || back.UnmarshalText(b) != nil || back.Duration != tt.d {
			t.Errorf("%v: text %q (want %q), back %v", tt.d, b, tt.want, back.Duration)
		}
	}
}

package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// ErrNoModel is wrapped by ModelReady's errors: no usable model is
// configured. The error text says how to configure one.
var ErrNoModel = errors.New("no usable model configured")

// ModelReady returns nil when c names a usable model, and otherwise an
// error wrapping ErrNoModel that says exactly how to configure one, with a
// loom.toml snippet. getenv (os.Getenv outside tests) is asked only whether
// the variable named by model.api_key_env is set; the key is never kept.
//
// An API key is required for OpenAI's own API, and for any server when
// api_key_env was set explicitly; a local server (Ollama, vLLM, llama.cpp)
// needs none.
//
// When the folder's own settings chose the model and are held back until
// the user trusts the folder, the error says that, naming the file and
// the keys, rather than that no model is set.
func (c Config) ModelReady(getenv func(string) string) error {
	err := c.modelReady(getenv)
	if err == nil {
		return nil
	}
	var held []string
	for _, k := range c.IgnoredKeys() {
		if strings.HasPrefix(k, "model.") {
			held = append(held, k)
		}
	}
	if len(held) == 0 {
		return err
	}
	where := c.trust.file
	if where == "" {
		where = "the editor's settings"
	}
	return notReady(fmt.Sprintf("the model is chosen by %s, which is held back until you trust this folder: %s %s. "+
		"Trust the folder to use it (see the notice), or set a model in your own config %s.",
		where, where, strings.Join(held, ", "), userFileWords()))
}

// userFileWords names the user's own config file.
func userFileWords() string {
	if f := DefaultUserFile(); f != "" {
		return f
	}
	return "~/.config/loom/loom.toml"
}

func (c Config) modelReady(getenv func(string) string) error {
	m := c.Model
	switch m.Provider {
	case ProviderScript:
		if m.Script == "" {
			return notReady(`provider "script" needs a scripted-model file:

  [model]
  provider = "script"
  script = "path/to/conversation.txt"   # relative to this loom.toml`)
		}
		if _, err := os.Stat(m.Script); err != nil {
			return notReady(fmt.Sprintf("scripted model: %v\nSet [model] script to an existing file.", err))
		}
		return nil
	case ProviderOpenAI, ProviderAnthropic:
	default:
		return notReady(fmt.Sprintf("unknown model provider %q: set [model] provider = %q (any OpenAI-compatible server) or %q.",
			m.Provider, ProviderOpenAI, ProviderScript))
	}
	if checkURL(m.BaseURL) != nil {
		return notReady(fmt.Sprintf("[model] base_url %q is not an http(s) URL.\n%s", m.BaseURL, howTo()))
	}
	openai := isOpenAI(m.BaseURL) || isAnthropic(m.BaseURL)
	if m.Name == "" {
		if !openai {
			return notReady(fmt.Sprintf(`no model name for the server at %s: set it in [model], e.g.

  [model]
  base_url = %q
  name = "qwen2.5-coder"   # a model the server has, e.g. from "ollama list"`, m.BaseURL, m.BaseURL))
		}
		return notReady("[model] name is not set.\n" + howTo())
	}
	env := m.APIKeyEnv
	if env == "" {
		env = "OPENAI_API_KEY"
	}
	if (openai || c.setBy("model.api_key_env")) && getenv(env) == "" {
		return notReady(fmt.Sprintf(`model %q at %s needs an API key, but the environment variable %s is empty.
Export it where the editor (or shell) starts loom-lsp:

  export %s=sk-...

or name the variable that holds your key:

  [model]
  api_key_env = "MY_KEY_VARIABLE"

Never put the key itself in loom.toml. For a local server that needs no key, use e.g.

  [model]
  base_url = "http://localhost:11434/v1"   # Ollama
  name = "qwen2.5-coder"`, m.Name, m.BaseURL, env, env))
	}
	return nil
}

// isAnthropic reports whether base is Anthropic's own API, which needs a
// key.
func isAnthropic(base string) bool {
	u, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Hostname(), "api.anthropic.com")
}

// isOpenAI reports whether base is OpenAI's own API, which needs a key.
func isOpenAI(base string) bool {
	u, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

func notReady(msg string) error { return fmt.Errorf("%w: %s", ErrNoModel, msg) }

// howTo is the generic "configure a model" text.
func howTo() string {
	where := DefaultUserFile()
	if where == "" {
		where = "~/.config/loom/loom.toml"
	}
	return fmt.Sprintf(`Configure one in %s (all workspaces) or <workspace>/.loom.toml.

For OpenAI, set a model name and export OPENAI_API_KEY=sk-... where loom-lsp starts:

  [model]
  name = "gpt-4.1"

For Ollama or another local OpenAI-compatible server (vLLM, llama.cpp, LM Studio), no key is needed:

  [model]
  base_url = "http://localhost:11434/v1"
  name = "qwen2.5-coder"`, where)
}

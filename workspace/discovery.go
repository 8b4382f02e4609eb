package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/loom-lsp/loom-lsp/llm"
)

// The discovery cache: what a model server said of itself (the model's
// context window, its model list, the discovery paths it does not serve),
// kept per server and model in the state directory, so that a start never
// asks again before it can use the answer. The answers are used at once
// and refreshed in the background after the first model response; a
// context-length error or a cut prompt forgets the window. Nothing secret
// is kept: the key is a hash of the base URL and the model name.

// discoveryFile is the cache's file in the state directory.
const discoveryFile = "servers.json"

// discoveryMaxAge is how long a remembered answer is used without a
// refresh having confirmed it; older entries are asked again first.
const discoveryMaxAge = 7 * 24 * time.Hour

// discoveryEntry is what one server said for one model.
type discoveryEntry struct {
	// Window is the model's context window; zero when the server did not
	// tell it.
	Window llm.Window `json:"window,omitzero"`
	// Models is the server's model list, sorted; nil when not asked.
	Models []string `json:"models,omitempty"`
	// Missing are the discovery paths the server answered 404.
	Missing []string `json:"missing,omitempty"`
	// At is when the entry was last asked.
	At time.Time `json:"at"`
}

// discoveryMu serialises the host's reads and writes of the cache file
// (other processes may write it too: each write replaces the file
// atomically, the last one wins).
var discoveryMu sync.Mutex

// discoveryKey names a server and model in the cache.
func discoveryKey(baseURL, model string) string {
	sum := sha256.Sum256([]byte(baseURL + "\x00" + model))
	return hex.EncodeToString(sum[:12])
}

func (h *Host) discoveryPath() string {
	dir, err := h.stateDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, discoveryFile)
}

// readDiscovery reads the cache file; a missing or broken file is empty.
func readDiscovery(path string) map[string]discoveryEntry {
	all := map[string]discoveryEntry{}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &all)
	}
	return all
}

// discovered returns the remembered entry of key, if it is recent.
func (h *Host) discovered(key string) (discoveryEntry, bool) {
	path := h.discoveryPath()
	if path == "" {
		return discoveryEntry{}, false
	}
	discoveryMu.Lock()
	defer discoveryMu.Unlock()
	e, ok := readDiscovery(path)[key]
	if !ok || time.Since(e.At) > discoveryMaxAge {
		return discoveryEntry{}, false
	}
	return e, true
}

// remember changes the entry of key with update and writes the cache.
// Failures are logged: the cache only saves time.
func (h *Host) remember(key string, update func(*discoveryEntry)) {
	path := h.discoveryPath()
	if path == "" {
		return
	}
	discoveryMu.Lock()
	defer discoveryMu.Unlock()
	all := readDiscovery(path)
	e := all[key]
	update(&e)
	e.At = time.Now()
	all[key] = e
	b, err := json.Marshal(all)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o700)
	}
	if err == nil {
		tmp := path + ".tmp" + time.Now().Format("150405.000000000")
		if err = os.WriteFile(tmp, b, 0o600); err == nil {
			if err = os.Rename(tmp, path); err != nil {
				os.Remove(tmp)
			}
		}
	}
	if err != nil {
		h.opts.Logger.Debug("the discovery cache was not written", "err", err)
	}
}

package fetch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// DefaultCacheBytes bounds a cache whose limit is zero.
const DefaultCacheBytes = 64 << 20

// Cache keeps fetched pages on disk, keyed by URL, for revalidation with
// ETag and Last-Modified. It is shared by every conversation and process
// using the same directory: entries are written whole (temp + rename).
// Only answers with a validator and without Cache-Control: no-store or
// private are kept; the oldest entries go when the cache is over its
// size.
type Cache struct {
	dir   string
	limit int64
	mu    sync.Mutex // serialises pruning within this process
}

// NewCache returns a cache in dir holding at most limit bytes of bodies
// (zero: DefaultCacheBytes).
func NewCache(dir string, limit int64) *Cache {
	if limit <= 0 {
		limit = DefaultCacheBytes
	}
	return &Cache{dir: dir, limit: limit}
}

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// Clear removes every entry. It reports how many pages were removed.
func (c *Cache) Clear() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ents, err := os.ReadDir(c.dir)
	if os.IsNotExist(err) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			n++
		}
		if err := os.Remove(filepath.Join(c.dir, e.Name())); err != nil && !os.IsNotExist(err) {
			return n, err
		}
	}
	return n, nil
}

// meta is an entry's description, beside its body.
type meta struct {
	URL          string `json:"url"`
	ContentType  string `json:"contentType,omitempty"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
}

// cached is one entry found for a URL; nil when there is none.
type cached struct {
	meta
	path string // without extension
}

func (c *Cache) key(u string) string {
	sum := sha256.Sum256([]byte(u))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:16]))
}

func (c *Cache) get(u string) *cached {
	p := c.key(u)
	b, err := os.ReadFile(p + ".json")
	if err != nil {
		return nil
	}
	var m meta
	if json.Unmarshal(b, &m) != nil || m.URL != u {
		return nil
	}
	return &cached{meta: m, path: p}
}

// conditional makes req ask only whether the entry changed.
func (e *cached) conditional(req *http.Request) {
	if e == nil {
		return
	}
	if e.ETag != "" {
		req.Header.Set("If-None-Match", e.ETag)
	}
	if e.LastModified != "" {
		req.Header.Set("If-Modified-Since", e.LastModified)
	}
}

func (e *cached) body() ([]byte, error) { return os.ReadFile(e.path + ".body") }

func (e *cached) header() http.Header {
	h := http.Header{}
	if e.ContentType != "" {
		h.Set("Content-Type", e.ContentType)
	}
	return h
}

// put keeps body for u when the answer can be revalidated. Failures are
// silent: the cache is an optimisation.
func (c *Cache) put(u string, h http.Header, body []byte) {
	cc := strings.ToLower(h.Get("Cache-Control"))
	if strings.Contains(cc, "no-store") || strings.Contains(cc, "private") || int64(len(body)) > c.limit {
		return
	}
	m := meta{URL: u, ContentType: h.Get("Content-Type"), ETag: h.Get("ETag"), LastModified: h.Get("Last-Modified")}
	if m.ETag == "" && m.LastModified == "" {
		return
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return
	}
	p := c.key(u)
	mb, _ := json.Marshal(m)
	if writeWhole(p+".body", body) != nil || writeWhole(p+".json", mb) != nil {
		return
	}
	c.prune()
}

func writeWhole(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// prune removes the oldest entries while the bodies exceed the limit.
func (c *Cache) prune() {
	c.mu.Lock()
	defer c.mu.Unlock()
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type body struct {
		path string
		size int64
		mod  int64
	}
	var bodies []body
	var total int64
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".body") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		bodies = append(bodies, body{filepath.Join(c.dir, e.Name()), info.Size(), info.ModTime().UnixNano()})
		total += info.Size()
	}
	sort.Slice(bodies, func(i, j int) bool { return bodies[i].mod < bodies[j].mod })
	for _, b := range bodies {
		if total <= c.limit {
			break
		}
		base := strings.TrimSuffix(b.path, ".body")
		os.Remove(base + ".json")
		os.Remove(b.path)
		total -= b.size
	}
}

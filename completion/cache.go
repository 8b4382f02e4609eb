package completion

import (
	"strings"
	"sync"
)

// cacheDocs and cachePerDoc bound the cache: the documents it keeps
// answers for, and the answers kept per document (the newest).
const (
	cacheDocs   = 32
	cachePerDoc = 8
)

// Cache keeps the model's answers by document, prefix and suffix. It
// serves a request whose prefix is an answer's prefix followed by text
// the user typed through the suggestion (the rest of the suggestion).
// It is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	docs  map[string][]cacheEntry // newest last
	order []string                // documents, least recently stored first
}

type cacheEntry struct {
	prefix, suffix, text string
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{docs: map[string][]cacheEntry{}} }

// Get returns the suggestion at the cursor of doc for prefix and suffix:
// an answer for the same text, or the rest of one the user typed into.
func (c *Cache) Get(doc, prefix, suffix string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	entries := c.docs[doc]
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if len(prefix) < len(e.prefix) || e.suffix != suffix || !strings.HasPrefix(prefix, e.prefix) {
			continue
		}
		typed := prefix[len(e.prefix):]
		if typed == "" {
			return e.text, true
		}
		if len(typed) < len(e.text) && strings.HasPrefix(e.text, typed) {
			return e.text[len(typed):], true
		}
	}
	return "", false
}

// Put records text as the suggestion for doc at prefix and suffix.
func (c *Cache) Put(doc, prefix, suffix, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	entries, ok := c.docs[doc]
	if !ok && len(c.order) >= cacheDocs {
		delete(c.docs, c.order[0])
		c.order = c.order[1:]
	}
	if ok {
		for i, d := range c.order {
			if d == doc {
				c.order = append(c.order[:i], c.order[i+1:]...)
				break
			}
		}
	}
	c.order = append(c.order, doc)
	if len(entries) >= cachePerDoc {
		entries = entries[1:]
	}
	c.docs[doc] = append(entries, cacheEntry{prefix: prefix, suffix: suffix, text: text})
}

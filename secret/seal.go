package secret

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// sealMark opens and closes a sealed secret: "⟪loom-secret:" + the first
// 16 hex digits of the value's SHA-256 + "⟫".
const (
	sealOpen  = "⟪loom-secret:"
	sealClose = "⟫"
)

var sealed = regexp.MustCompile(`⟪loom-secret:([0-9a-f]{16})⟫`)

func sealID(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:8])
}

// Seal returns s with each secret value r knows replaced by a mark that
// names it without holding it (a hash): what the model wrote can be kept
// at rest without the key, and given back exactly by Unseal while the key
// is known. Bearer-looking tokens are left as they are: they are not
// values r knows, and code the model wrote must come back unchanged.
func (r *Redactor) Seal(s string) string {
	values := r.values()
	if values == nil {
		return s
	}
	for _, v := range *values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, sealOpen+sealID(v)+sealClose)
		}
	}
	return s
}

// Unseal gives back the values Seal replaced, those r knows now; a mark
// of a value r does not know (the key was changed since) becomes
// Mask.
func (r *Redactor) Unseal(s string) string {
	if !strings.Contains(s, sealOpen) {
		return s
	}
	byID := map[string]string{}
	if values := r.values(); values != nil {
		for _, v := range *values {
			byID[sealID(v)] = v
		}
	}
	return sealed.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := byID[sealed.FindStringSubmatch(m)[1]]; ok {
			return v
		}
		return Mask
	})
}

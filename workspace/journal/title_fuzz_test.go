package journal

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/secret"
)

// titleKey is the configured secret of FuzzTitle.
const titleKey = "sk-fuzztitle-0123456789abcdefXYZ"

// bearerToken finds a bearer token the mask left in a title.
var bearerToken = regexp.MustCompile(`(?i)\bbearer(\s+|%20)[A-Za-z0-9\-._~+/]+=*`)

// FuzzTitle: whatever the first prompt, with the key put anywhere in it,
// the title shown for it (the live one, and the listing's, read back
// from a journal of an older loom-lsp that kept the prompt unmasked)
// holds neither the key nor any piece of it the cut left, nor a bearer
// token.
func FuzzTitle(f *testing.F) {
	f.Add("my key is ", " please", uint8(0))
	f.Add(strings.Repeat("é", 70), " and more", uint8(1))
	f.Add("Authorization: Bearer ", "\nsecond line", uint8(2))
	f.Add(strings.Repeat("x", 75), "", uint8(3))
	f.Add("two ", " keys "+titleKey, uint8(0))
	r := secret.NewRedactor(nil)
	r.Add(titleKey)
	dir := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, before, after string, form uint8) {
		prompt := before + titleKey + after
		if form%4 == 2 {
			prompt = before + "abc.DEF-123_tok" + after // a bearer token, no key
		}
		check := func(where, title string) {
			if strings.Contains(title, titleKey[:12]) && !strings.Contains(before+after, titleKey[:12]) {
				t.Fatalf("%s title %q of prompt %q shows the key, or its beginning", where, title, prompt)
			}
			for _, m := range bearerToken.FindAllString(title, -1) {
				if !strings.Contains(r.String(before+after), m) {
					t.Fatalf("%s title %q of prompt %q shows a bearer token %q", where, title, prompt, m)
				}
			}
		}
		check("live", Title(r, prompt))
		if form%4 == 3 {
			return // the listing's path writes a file: not every input
		}
		n++
		j, err := Create(filepath.Join(dir, "j"+strings.Repeat("x", n%3)+".jsonl"), "/folder", time.Unix(int64(n), 0))
		if err != nil {
			t.Fatal(err)
		}
		if err := j.AppendEvent(fsm.UserInput{Text: prompt}); err != nil {
			t.Fatal(err)
		}
		j.Close()
		c, err := ReadInfo(j.path, true, r)
		if err != nil {
			t.Fatal(err)
		}
		check("listed", c.Title)
	})
}

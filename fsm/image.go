package fsm

import "fmt"

// Image is a picture attached to a user prompt. The machine keeps only
// its reference: the bytes are stored by the caller under Hash (the
// journal holds the reference, never the picture), and a provider reads
// them when it builds a request.
type Image struct {
	// Hash is the hex SHA-256 of the picture's bytes.
	Hash string `json:"hash"`
	// MIME is its type: image/png, image/jpeg, image/gif or image/webp.
	MIME string `json:"mime"`
	// Size is its size in bytes.
	Size int `json:"size"`
}

// imageTokens is what the context estimate counts for one image: servers
// count a picture as a fixed number of tokens for its tiles (OpenAI: 85
// plus 170 a tile; a 1024×1024 picture ~765), not by its bytes.
const imageTokens = 1000

// describeImages is " images=[png:ab12cd34 …]" for Describe, "" for none.
func describeImages(imgs []Image) string {
	if len(imgs) == 0 {
		return ""
	}
	s := " images=["
	for i, img := range imgs {
		if i > 0 {
			s += " "
		}
		h := img.Hash
		if len(h) > 8 {
			h = h[:8]
		}
		s += fmt.Sprintf("%s:%s", img.MIME, h)
	}
	return s + "]"
}

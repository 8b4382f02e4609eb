package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// Pictures in prompts. A prompt's pictures are checked (type, size, count,
// a model that takes them), stored by content hash in the state
// directory's images/ (never in the repository, never inline in the
// journal: the journal's UserInput holds the fsm.Image references), and
// read back from there whenever a request is built, so a resumed or
// rewound conversation sends them again.

// MaxImageBytes bounds one picture: larger ones are refused, saying so
// (downscale it first).
const MaxImageBytes = 5 << 20

// MaxImages bounds the pictures of one prompt.
const MaxImages = 8

// ErrImage is wrapped by AskWithImages's error for a picture refused
// (type, size, count, a model that takes none); nothing was sent.
var ErrImage = errors.New("image refused")

// imageTypes are the picture types the model APIs take.
var imageTypes = map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}

// ImageInput is a picture for a prompt: its bytes, and the name to say in
// errors (a file name, "image 2").
type ImageInput struct {
	Name string
	Data []byte
}

// imagesDir is where the host keeps the pictures of prompts.
func (h *Host) imagesDir() (string, error) {
	dir, err := h.stateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "images"), nil
}

// readImage reads a stored picture, checking that its bytes are still
// the ones referenced (llm.ImageSource).
func (h *Host) readImage(img fsm.Image) ([]byte, error) {
	dir, err := h.imagesDir()
	if err != nil {
		return nil, err
	}
	if len(img.Hash) != 64 {
		return nil, fmt.Errorf("bad image reference %q", img.Hash)
	}
	b, err := os.ReadFile(filepath.Join(dir, img.Hash+imageTypes[img.MIME]))
	if err != nil {
		return nil, fmt.Errorf("the picture is no longer in the state directory: %w", err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != img.Hash {
		return nil, errors.New("the stored picture was changed")
	}
	return b, nil
}

// storeImage checks one picture and stores it by hash; it returns its
// reference.
func (h *Host) storeImage(in ImageInput) (fsm.Image, error) {
	if len(in.Data) > MaxImageBytes {
		return fsm.Image{}, fmt.Errorf("%w: %s is %.1f MB, over the %d MB limit: downscale it first", ErrImage, in.Name, float64(len(in.Data))/(1<<20), MaxImageBytes>>20)
	}
	mime := http.DetectContentType(in.Data)
	ext, ok := imageTypes[mime]
	if !ok {
		return fsm.Image{}, fmt.Errorf("%w: %s is not a PNG, JPEG, GIF or WebP picture (it looks like %s)", ErrImage, in.Name, mime)
	}
	sum := sha256.Sum256(in.Data)
	img := fsm.Image{Hash: hex.EncodeToString(sum[:]), MIME: mime, Size: len(in.Data)}
	dir, err := h.imagesDir()
	if err != nil {
		return fsm.Image{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fsm.Image{}, err
	}
	path := filepath.Join(dir, img.Hash+ext)
	if _, err := os.Stat(path); err == nil {
		return img, nil // the same picture, stored before
	}
	tmp, err := os.CreateTemp(dir, ".image-*")
	if err != nil {
		return fsm.Image{}, err
	}
	_, werr := tmp.Write(in.Data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fsm.Image{}, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fsm.Image{}, err
	}
	return img, nil
}

// takesImages says whether the conversation's model takes pictures
// (model.images), and if not, why, for the user. m is the
// conversation's machine (its model).
func (s *settings) takesImages(m *fsm.Machine) (bool, string) {
	model := modelName(m, s.cfg)
	switch s.cfg.Model.Images {
	case "on":
		return true, ""
	case "off":
		return false, fmt.Sprintf("model.images is \"off\" for %s", model)
	}
	if said, ok := s.provider.(interface{ ImagesSaid(string) (bool, bool) }); ok {
		// What the server's model listing said, when it did.
		if accepts, known := said.ImagesSaid(model); known && accepts {
			return true, ""
		} else if known {
			return false, fmt.Sprintf("the server's model listing says %s does not take pictures (set model.images = \"on\" in loom.toml if it does)", model)
		}
	}
	if llm.AcceptsImages(model) {
		return true, ""
	}
	return false, fmt.Sprintf("the model %s is not known to take pictures (set model.images = \"on\" in loom.toml if it does)", model)
}

// AskWithImages submits a prompt with pictures, as Ask does. Each picture
// is checked and stored before anything is sent; a refusal (ErrImage)
// sends nothing.
func (s *Conversation) AskWithImages(ctx context.Context, prompt string, images []ImageInput) (uint64, error) {
	if len(images) == 0 {
		return s.Ask(ctx, prompt)
	}
	if len(images) > MaxImages {
		return 0, fmt.Errorf("%w: %d pictures, more than the %d a prompt may carry", ErrImage, len(images), MaxImages)
	}
	var ok bool
	var why string
	if err := s.loop.call(ctx, func() { ok, why = s.takesImages(s.m) }); err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrImage, why)
	}
	refs := make([]fsm.Image, 0, len(images))
	for _, in := range images {
		img, err := s.folder.host.storeImage(in)
		if err != nil {
			return 0, err
		}
		refs = append(refs, img)
	}
	return s.ask(ctx, fsm.UserInput{Text: prompt, Images: refs})
}

package attach

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // register the GIF decoder for image.DecodeConfig
	_ "image/jpeg" // and JPEG
	_ "image/png"  // and PNG
	"io"
	"os"
	"path/filepath"
	"strings"

	_ "golang.org/x/image/webp" // and WebP, which the standard library lacks

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/imagefit"
)

// maxRead bounds what is read of a file before it is refused: a file
// this big is not read whole only to be told it is too big.
const maxRead = 64 << 20

// Source is the Added source of the text block that names an image in a
// user message (conversation.Block.Added).
const Source = "image"

// Image is an image ready to attach.
type Image struct {
	// Name is how the user named it: the path as given, or
	// "clipboard.png".
	Name string
	// MediaType is image/png, image/jpeg, image/gif or image/webp.
	MediaType string
	// Size is its size in bytes; Width and Height its dimensions.
	Size          int
	Width, Height int
	// From is what it was scaled down from (size and dimensions), when
	// it was over the providers' limits; "" when sent as it is.
	From string
	data []byte
}

// Label names the image for people and for the model: its name, size
// and dimensions ("shot.png, 1.2 MB, 1920×1080").
func (im Image) Label() string {
	l := fmt.Sprintf("%s, %s, %d×%d", im.Name, SizeText(im.Size), im.Width, im.Height)
	if im.From != "" {
		l += ", scaled down from " + im.From
	}
	return l
}

// Blocks are the image as a user message carries it: a text block panto
// added that names it ("[image: shot.png, 1.2 MB, 1920×1080]"), then
// the image block.
func (im Image) Blocks() []conversation.Block {
	return []conversation.Block{
		conversation.AddedText("[image: "+im.Label()+"]", Source),
		conversation.Image(im.MediaType, base64.StdEncoding.EncodeToString(im.data)),
	}
}

// ErrNotImage is the error of a file that is not a PNG, JPEG, GIF or
// WebP image: tell the user which file, and attach another.
var ErrNotImage = errors.New("not a PNG, JPEG, GIF or WebP image")

// TooBigError refuses an image over the limit.
type TooBigError struct {
	Name        string
	Size, Limit int
}

func (e *TooBigError) Error() string {
	return fmt.Sprintf("%s is %s: images over %s are not attached", e.Name, SizeText(e.Size), SizeText(e.Limit))
}

// File reads the image file at path (relative to dir when it is not
// absolute), named name. ErrNotImage (wrapped, with the path) when its
// content is not an image; a *TooBigError over the limit.
func File(dir, path, name string) (Image, error) {
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(dir, full)
	}
	f, err := os.Open(full)
	if err != nil {
		return Image{}, fmt.Errorf("attach %s: %w", name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Image{}, fmt.Errorf("attach %s: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		return Image{}, fmt.Errorf("attach %s: not a regular file", name)
	}
	if st.Size() > maxRead {
		return Image{}, &TooBigError{Name: name, Size: int(min(st.Size(), 1<<40)), Limit: maxRead}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRead+1))
	if err != nil {
		return Image{}, fmt.Errorf("attach %s: read %s: %w", name, full, err)
	}
	return FromBytes(name, data)
}

// FromBytes is the image data named name (see File), fitted to the
// providers' limits (imagefit.Default): one too large is scaled down and
// re-encoded, and says so in its Label.
func FromBytes(name string, data []byte) (Image, error) {
	if Sniff(data) == "" {
		return Image{}, fmt.Errorf("attach %s: %w", name, ErrNotImage)
	}
	if _, _, err := image.DecodeConfig(bytes.NewReader(data)); err != nil {
		return Image{}, fmt.Errorf("attach %s: %w (%v)", name, ErrNotImage, err)
	}
	fitted, err := imagefit.Fit(data, imagefit.Default)
	if err != nil {
		return Image{}, fmt.Errorf("attach %s: %w", name, err)
	}
	im := Image{Name: name, MediaType: fitted.MediaType, Size: len(fitted.Data), Width: fitted.Width, Height: fitted.Height, data: fitted.Data}
	if fitted.Scaled {
		im.From = fmt.Sprintf("%s, %d×%d", SizeText(fitted.FromBytes), fitted.FromWidth, fitted.FromHeight)
	}
	return im, nil
}

// Sniff returns the media type of an image's bytes by their signature
// (image/png, image/jpeg, image/gif, image/webp), or "" for anything
// else (imagefit.Detect).
func Sniff(b []byte) string { return imagefit.Detect(b) }

// imageExt reports whether a file's name says it is an image of a
// format panto attaches.
func imageExt(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return true
	}
	return false
}

// SizeText is a size in bytes as people read it: 512 B, 1.2 kB, 3.4 MB.
func SizeText(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
	}
}

// Labels are the labels of a user message's images, in order: the text
// block panto added before each (Blocks) when there is one, else the
// image's media type and size.
func Labels(m conversation.Message) []string {
	var out []string
	for i, b := range m.Content {
		if b.Type != conversation.TypeImage {
			continue
		}
		if i > 0 {
			p := m.Content[i-1]
			if p.Type == conversation.TypeText && p.Added == Source {
				if l, ok := strings.CutPrefix(p.Text, "[image: "); ok {
					out = append(out, strings.TrimSuffix(l, "]"))
					continue
				}
			}
		}
		out = append(out, fmt.Sprintf("%s, %s", b.MediaType, SizeText(len(b.Data)*3/4)))
	}
	return out
}

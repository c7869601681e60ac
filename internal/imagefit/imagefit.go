// Package imagefit makes an image file fit what the model providers take,
// at the point panto makes an image block of it (the read tool, an
// attached file, a pasted image): it tells the four image formats both
// wires take (PNG, JPEG, GIF, WebP) by their first bytes, reads their
// dimensions, and scales an image down, re-encoded as PNG or JPEG, when it
// is over the limits; what cannot be made to fit is refused with an error
// that gives the size and the limit.
//
// What does not belong here: how an image is sent (the serializers), and
// where it is stored (sessionlog).
package imagefit

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // registers the GIF decoder with image
	"image/jpeg"
	"image/png"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // registers the WebP decoder with image
)

// Limits are what an image may be and still be sent as it is.
type Limits struct {
	// MaxBytes is the most bytes the image file may have (decoded, not
	// base64).
	MaxBytes int
	// MaxEdge is the most pixels its longer edge may have.
	MaxEdge int
}

// The providers' limits (each provider's vision guide, December 2026).
var (
	// Anthropic refuses an image whose base64 data is over 5 MB or that
	// is over 8000 px on an edge, and scales any image over 1568 px on
	// its long edge down itself: more costs upload and latency for
	// nothing. 5 MB of base64 is 3.75 MiB of image.
	Anthropic = Limits{MaxBytes: 5 << 20 / 4 * 3, MaxEdge: 1568}
	// OpenAI takes up to 20 MB per image and sees at most 2000 px on the
	// long edge in high detail.
	OpenAI = Limits{MaxBytes: 20 << 20, MaxEdge: 2000}
	// Default fits both wires (the smaller of each), so an image is
	// fitted once, when its block is made, whatever model it goes to
	// later; it also keeps a tool result with an image under gRPC's
	// 4 MiB message limit between an extension and panto.
	Default = Limits{MaxBytes: min(Anthropic.MaxBytes, OpenAI.MaxBytes), MaxEdge: min(Anthropic.MaxEdge, OpenAI.MaxEdge)}
)

// MaxPixels is the largest image Fit decodes to scale it down (width
// times height): 40 megapixels take 160 MB of memory as RGBA. A larger
// one is refused, never decoded.
const MaxPixels = 40_000_000

// ErrNotImage is the error of Fit for data that is not a PNG, JPEG, GIF
// or WebP image; the caller treats the data as another kind of file.
var ErrNotImage = errors.New("not a PNG, JPEG, GIF or WebP image")

// Image is an image as it is to be sent.
type Image struct {
	// Data is the image file (not base64), of MediaType.
	Data      []byte
	MediaType string
	// Width and Height are its dimensions in pixels.
	Width, Height int
	// Scaled is set when Data was scaled down from an image of
	// FromWidth×FromHeight pixels and FromBytes bytes.
	Scaled                           bool
	FromWidth, FromHeight, FromBytes int
}

// Detect returns the media type of the image data starts with, by its
// magic bytes (image/png, image/jpeg, image/gif or image/webp), or "".
// The first 12 bytes are enough.
func Detect(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// Fit returns data as an image within l: as it is when it already is,
// else scaled down so its long edge is at most l.MaxEdge and re-encoded
// (PNG for a PNG or GIF, JPEG for a JPEG or WebP), smaller still or as a
// JPEG of lower quality until it has at most l.MaxBytes bytes. Data that
// is not one of the four formats is ErrNotImage; one that does not decode
// (it is always decoded whole, to check it), is over MaxPixels or cannot
// be brought under l is an error giving its size and the limit.
func Fit(data []byte, l Limits) (Image, error) {
	mt := Detect(data)
	if mt == "" {
		return Image{}, ErrNotImage
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Image{}, fmt.Errorf("read %s image: %w", format(mt), err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > MaxPixels {
		return Image{}, fmt.Errorf("%s image of %d×%d px: too large to scale down (more than %d megapixels); make it smaller than %d px on its long edge and %d bytes first",
			format(mt), cfg.Width, cfg.Height, MaxPixels/1_000_000, l.MaxEdge, l.MaxBytes)
	}
	// Decoded whole even when it fits: a damaged image the provider
	// refuses would fail every later request of the session.
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return Image{}, fmt.Errorf("decode %s image: %w", format(mt), err)
	}
	if len(data) <= l.MaxBytes && max(cfg.Width, cfg.Height) <= l.MaxEdge {
		return Image{Data: data, MediaType: mt, Width: cfg.Width, Height: cfg.Height}, nil
	}
	outType := "image/png"
	if mt == "image/jpeg" || mt == "image/webp" {
		outType = "image/jpeg"
	}
	edge := min(l.MaxEdge, max(cfg.Width, cfg.Height))
	quality := 85
	for range 8 {
		w, h := scaledSize(cfg.Width, cfg.Height, edge)
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
		out, err := encode(dst, outType, quality)
		if err != nil {
			return Image{}, err
		}
		if len(out) <= l.MaxBytes {
			return Image{Data: out, MediaType: outType, Width: w, Height: h,
				Scaled: true, FromWidth: cfg.Width, FromHeight: cfg.Height, FromBytes: len(data)}, nil
		}
		// Too many bytes still: a PNG becomes a JPEG (losing
		// transparency), a JPEG loses quality, then pixels.
		switch {
		case outType == "image/png":
			outType = "image/jpeg"
		case quality > 60:
			quality -= 15
		default:
			edge = edge * 3 / 4
		}
	}
	return Image{}, fmt.Errorf("%s image of %d×%d px and %d bytes: still over %d bytes when scaled down", format(mt), cfg.Width, cfg.Height, len(data), l.MaxBytes)
}

// scaledSize returns w×h scaled so its longer edge is edge, at least one
// pixel each way.
func scaledSize(w, h, edge int) (int, int) {
	if max(w, h) <= edge {
		return w, h
	}
	if w >= h {
		return edge, max(1, h*edge/w)
	}
	return max(1, w*edge/h), edge
}

func encode(m image.Image, mediaType string, quality int) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	if mediaType == "image/png" {
		err = (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, m)
	} else {
		err = jpeg.Encode(&buf, m, &jpeg.Options{Quality: quality})
	}
	if err != nil {
		return nil, fmt.Errorf("encode the scaled image as %s: %w", format(mediaType), err)
	}
	return buf.Bytes(), nil
}

// format names a media type's format for people: "PNG".
func format(mediaType string) string {
	switch mediaType {
	case "image/png":
		return "PNG"
	case "image/jpeg":
		return "JPEG"
	case "image/gif":
		return "GIF"
	case "image/webp":
		return "WebP"
	}
	return mediaType
}

// Describe returns a line about the image for people and the model:
// "x.png: PNG image, 1234 bytes, 640×480 px", with how it was scaled
// down when it was.
func (im Image) Describe(name string) string {
	s := fmt.Sprintf("%s: %s image, %d bytes, %d×%d px", name, format(im.MediaType), len(im.Data), im.Width, im.Height)
	if im.Scaled {
		s += fmt.Sprintf(" (scaled down from %d×%d px, %d bytes)", im.FromWidth, im.FromHeight, im.FromBytes)
	}
	return s
}

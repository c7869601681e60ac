package imagefit

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	xwebp "golang.org/x/image/webp"
)

// noise returns a w×h image of random pixels, which compresses badly.
func noise(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range m.Pix {
		m.Pix[i] = byte(r.UintN(256))
	}
	return m
}

func encodePNG(t testing.TB, m image.Image) []byte {
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, m))
	return buf.Bytes()
}

func TestDetect(t *testing.T) {
	t.Parallel()
	var g bytes.Buffer
	require.NoError(t, gif.Encode(&g, image.NewPaletted(image.Rect(0, 0, 2, 2), []color.Color{color.Black}), nil))
	var j bytes.Buffer
	require.NoError(t, jpeg.Encode(&j, noise(2, 2), nil))
	webp, err := os.ReadFile(filepath.Join("testdata", "gopher.webp"))
	require.NoError(t, err)
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{encodePNG(t, noise(1, 1)), "image/png"},
		{j.Bytes(), "image/jpeg"},
		{g.Bytes(), "image/gif"},
		{webp, "image/webp"},
		{[]byte("RIFF\x00\x00\x00\x00WAVE"), ""},
		{[]byte("package main\n"), ""},
		{nil, ""},
	} {
		require.Equal(t, tc.want, Detect(tc.data))
		im, err := Fit(tc.data, Default)
		if tc.want == "" {
			require.ErrorIs(t, err, ErrNotImage)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, im.MediaType)
		require.Equal(t, tc.data, im.Data, "a small image is sent as it is")
		require.False(t, im.Scaled)
	}
	im, err := Fit(webp, Default)
	require.NoError(t, err)
	cfg, err := xwebp.DecodeConfig(bytes.NewReader(webp))
	require.NoError(t, err)
	require.Equal(t, [2]int{cfg.Width, cfg.Height}, [2]int{im.Width, im.Height}, "the WebP decoder reads its size")
	require.Positive(t, im.Width)
}

func TestFitScalesTheLongEdge(t *testing.T) {
	t.Parallel()
	src := encodePNG(t, noise(3000, 1000))
	im, err := Fit(src, Default)
	require.NoError(t, err)
	require.True(t, im.Scaled)
	require.Equal(t, "image/png", im.MediaType)
	require.Equal(t, [2]int{1568, 522}, [2]int{im.Width, im.Height}, "the aspect ratio is kept")
	cfg, err := png.DecodeConfig(bytes.NewReader(im.Data))
	require.NoError(t, err)
	require.Equal(t, [2]int{1568, 522}, [2]int{cfg.Width, cfg.Height})
	require.LessOrEqual(t, len(im.Data), Default.MaxBytes)
	require.Equal(t, [3]int{3000, 1000, len(src)}, [3]int{im.FromWidth, im.FromHeight, im.FromBytes})
	require.Equal(t, "big.png: PNG image, "+strconv.Itoa(len(im.Data))+" bytes, 1568×522 px (scaled down from 3000×1000 px, "+strconv.Itoa(len(src))+" bytes)", im.Describe("big.png"))
}

func TestFitBytes(t *testing.T) {
	t.Parallel()
	// Within the edge but over the bytes: a noisy PNG becomes a JPEG.
	src := encodePNG(t, noise(1000, 1000))
	l := Limits{MaxBytes: 400_000, MaxEdge: 1568}
	require.Greater(t, len(src), l.MaxBytes)
	im, err := Fit(src, l)
	require.NoError(t, err)
	require.True(t, im.Scaled)
	require.Equal(t, "image/jpeg", im.MediaType)
	require.LessOrEqual(t, len(im.Data), l.MaxBytes)
	_, err = jpeg.DecodeConfig(bytes.NewReader(im.Data))
	require.NoError(t, err)

	// A limit nothing meets is refused, with the size and the limit.
	_, err = Fit(src, Limits{MaxBytes: 10, MaxEdge: 1568})
	require.ErrorContains(t, err, "PNG image of 1000×1000 px and "+strconv.Itoa(len(src))+" bytes: still over 10 bytes")
}

func TestFitRefuses(t *testing.T) {
	t.Parallel()
	// A header that claims a huge image is refused before decoding.
	bomb := encodePNG(t, image.NewGray(image.Rect(0, 0, 10000, 10000)))
	_, err := Fit(bomb, Default)
	require.ErrorContains(t, err, "PNG image of 10000×10000 px: too large to scale down (more than 40 megapixels)")
	// A truncated file is an error, not a panic.
	_, err = Fit(encodePNG(t, noise(10, 10))[:40], Default)
	require.ErrorContains(t, err, "PNG")
}

func FuzzFit(f *testing.F) {
	f.Add(encodePNG(f, noise(3, 2)))
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Add([]byte("GIF89a\x01\x00\x01\x00"))
	f.Add([]byte("RIFF\x10\x00\x00\x00WEBPVP8 "))
	f.Add([]byte("\xff\xd8\xff\xe0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := Fit(data, Limits{MaxBytes: 2000, MaxEdge: 16})
		if err != nil {
			return
		}
		require.LessOrEqual(t, len(im.Data), 2000)
		require.LessOrEqual(t, max(im.Width, im.Height), 16)
		require.Equal(t, Detect(im.Data), im.MediaType)
	})
}

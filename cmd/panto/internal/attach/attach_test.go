package attach

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// webp1x1 is a 1×1 lossless WebP image.
const webp1x1 = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="

func pic(w, h int) image.Image {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	m.Set(0, 0, color.RGBA{255, 0, 0, 255})
	return m
}

func encoded(t *testing.T, format string, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	switch format {
	case "png":
		require.NoError(t, png.Encode(&b, pic(w, h)))
	case "jpeg":
		require.NoError(t, jpeg.Encode(&b, pic(w, h), nil))
	case "gif":
		require.NoError(t, gif.Encode(&b, pic(w, h), nil))
	case "webp":
		d, err := base64.StdEncoding.DecodeString(webp1x1)
		require.NoError(t, err)
		b.Write(d)
	}
	return b.Bytes()
}

func write(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

func TestFileFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		format, name, media string
		w, h                int
	}{
		{"png", "a.png", "image/png", 64, 32},
		{"jpeg", "b.jpg", "image/jpeg", 20, 10},
		{"gif", "c.gif", "image/gif", 7, 9},
		{"webp", "d.webp", "image/webp", 1, 1},
		// Told by content, not by name.
		{"png", "shot", "image/png", 3, 4},
		{"jpeg", "wrong.png", "image/jpeg", 5, 5},
	} {
		data := encoded(t, tc.format, tc.w, tc.h)
		write(t, dir, tc.name, data)
		im, err := File(dir, tc.name, tc.name)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.media, im.MediaType, tc.name)
		require.Equal(t, [2]int{tc.w, tc.h}, [2]int{im.Width, im.Height}, tc.name)
		require.Equal(t, len(data), im.Size)
		bl := im.Blocks()
		require.Len(t, bl, 2)
		require.Equal(t, conversation.TypeText, bl[0].Type)
		require.Equal(t, Source, bl[0].Added)
		require.Equal(t, "[image: "+im.Label()+"]", bl[0].Text)
		require.Equal(t, conversation.TypeImage, bl[1].Type)
		require.Equal(t, tc.media, bl[1].MediaType)
		back, err := base64.StdEncoding.DecodeString(bl[1].Data)
		require.NoError(t, err)
		require.Equal(t, data, back, "the image is sent as it is")
	}
}

func TestLabel(t *testing.T) {
	t.Parallel()
	im := Image{Name: "shot.png", Size: 1_234_567, Width: 1920, Height: 1080}
	require.Equal(t, "shot.png, 1.2 MB, 1920×1080", im.Label())
	require.Equal(t, "512 B", SizeText(512))
	require.Equal(t, "12.3 kB", SizeText(12_300))
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "fake.png", []byte("hello, not a picture"))
	_, err := File(dir, "fake.png", "fake.png")
	require.ErrorIs(t, err, ErrNotImage)
	require.Contains(t, err.Error(), "fake.png")

	// A PNG signature with a broken header is not an image either.
	write(t, dir, "broken.png", []byte("\x89PNG\r\n\x1a\nxxxx"))
	_, err = File(dir, "broken.png", "broken.png")
	require.ErrorIs(t, err, ErrNotImage)

	// Over the providers' limits: scaled down, and the label says so.
	write(t, dir, "wide.png", encoded(t, "png", 3000, 1000))
	im, err := File(dir, "wide.png", "wide.png")
	require.NoError(t, err)
	require.Equal(t, [2]int{1568, 522}, [2]int{im.Width, im.Height})
	require.Contains(t, im.Label(), "scaled down from ")
	require.Contains(t, im.Label(), "3000×1000")
	// Too large to scale down: refused, saying why.
	var huge bytes.Buffer
	require.NoError(t, png.Encode(&huge, image.NewGray(image.Rect(0, 0, 7000, 6000))))
	write(t, dir, "huge.png", huge.Bytes())
	_, err = File(dir, "huge.png", "huge.png")
	require.ErrorContains(t, err, "attach huge.png: PNG image of 7000×6000 px: too large to scale down")

	_, err = File(dir, "missing.png", "missing.png")
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestScanMentions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"look at @shot.png", []string{"shot.png"}},
		{"@a.png, @b/c.jpg.", []string{"a.png", "b/c.jpg"}},
		{`see @"my shot.png" now`, []string{"my shot.png"}},
		{"mail me@example.com", nil},
		{"(@x.png)", nil}, // not after a space
		{"@", nil},
		{`@"unclosed`, nil},
		{"line\n@two.gif", []string{"two.gif"}},
	} {
		var got []string
		for _, m := range ScanMentions(tc.in) {
			got = append(got, m.Path)
		}
		require.Equal(t, tc.want, got, tc.in)
	}
}

func TestMentions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "shot.png", encoded(t, "png", 8, 6))
	write(t, dir, "pics/cat", encoded(t, "gif", 2, 3))
	write(t, dir, "main.go", []byte("package main\n"))
	ims, err := Mentions("compare @shot.png and @pics/cat with @main.go, @nobody and @shot.png again", dir)
	require.NoError(t, err)
	require.Len(t, ims, 2, "the image files, each once; not the source file or the missing one")
	require.Equal(t, "shot.png, "+SizeText(ims[0].Size)+", 8×6", ims[0].Label())
	require.Equal(t, "shot.png", ims[0].Name)
	require.Equal(t, "pics/cat", ims[1].Name)
	require.Equal(t, "image/gif", ims[1].MediaType)

	write(t, dir, "notes.png", []byte("text"))
	_, err = Mentions("see @notes.png", dir)
	require.ErrorIs(t, err, ErrNotImage)
}

func TestPastedPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"/home/me/shot.png", "/home/me/shot.png", true},
		{"  /home/me/shot.png\n", "/home/me/shot.png", true},
		{"'/home/me/my shot.png'", "/home/me/my shot.png", true},
		{`"/home/me/my shot.png"`, "/home/me/my shot.png", true},
		{`/home/me/my\ shot\ \(1\).png`, "/home/me/my shot (1).png", true},
		{"file:///home/me/my%20shot.png", "/home/me/my shot.png", true},
		{"file://localhost/tmp/a.png", "/tmp/a.png", true},
		{"file://elsewhere/tmp/a.png", "", false},
		{"two\nlines.png", "", false},
		{"", "", false},
		{"''", "", false},
	} {
		got, ok := PastedPath(tc.in)
		require.Equal(t, tc.ok, ok, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

func TestPasted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := write(t, dir, "my shot.png", encoded(t, "png", 4, 4))
	im, ok, err := Pasted(strings.ReplaceAll(p, " ", `\ `), dir)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "my shot.png", im.Name)
	for _, text := range []string{"hello world", filepath.Join(dir, "none.png"), dir, write(t, dir, "a.txt", []byte("x"))} {
		_, ok, err := Pasted(text, dir)
		require.NoError(t, err)
		require.False(t, ok, "%q is pasted as text", text)
	}
	wide := write(t, dir, "wide.png", encoded(t, "png", 2000, 100))
	im, ok, err = Pasted(wide, dir)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 1568, im.Width, "scaled down to the providers' limits")
}

func TestLabels(t *testing.T) {
	t.Parallel()
	im := Image{Name: "a.png", MediaType: "image/png", Size: 3, Width: 1, Height: 2, data: []byte("abc")}
	m := conversation.Message{Role: conversation.RoleUser, Content: append([]conversation.Block{conversation.Text("hi")}, im.Blocks()...)}
	m.Content = append(m.Content, conversation.Image("image/jpeg", "AAAA"))
	require.Equal(t, []string{"a.png, 3 B, 1×2", "image/jpeg, 3 B"}, Labels(m))
	require.Equal(t, "hi", m.Typed(), "the label is not what the user typed")
}

func FuzzPastedPath(f *testing.F) {
	for _, s := range []string{"/a b.png", `'/x.png'`, `/a\ b.png`, "file:///a%20b.png", "file://h/x", "\"", `\`, "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := PastedPath(s)
		if ok && (p == "" || strings.ContainsAny(p, "\n\r\x00")) {
			t.Fatalf("PastedPath(%q) = %q", s, p)
		}
		if !ok && p != "" {
			t.Fatalf("PastedPath(%q) = %q, false", s, p)
		}
	})
}

func FuzzScanMentions(f *testing.F) {
	for _, s := range []string{"@a.png", `@"a b.png" x`, "x @y, @z.", "@\"", "@@", "a@b @"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range ScanMentions(s) {
			if m.Path == "" || !strings.Contains(s, m.Path) || strings.ContainsRune(m.Path, '\n') {
				t.Fatalf("ScanMentions(%q): %q", s, m.Path)
			}
		}
	})
}

func FuzzFromBytes(f *testing.F) {
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Add([]byte("GIF89a"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8L"))
	f.Add([]byte{0xff, 0xd8, 0xff, 0xe0})
	f.Fuzz(func(t *testing.T, b []byte) {
		im, err := FromBytes("x", b)
		if err == nil && (im.Width < 0 || im.Height < 0 || im.MediaType == "") {
			t.Fatalf("FromBytes: %+v", im)
		}
	})
}

package sessionlog

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/sessionlog/atomicfile"
)

// An image of a message is kept once, by content, in the folder beside
// the log that ImageDir names: the file "sha256-<hex>.<ext>" holds the
// image's decoded bytes, and the log's image block holds its media type,
// sha256 and size instead of its base64 data. A file there is written
// whole (package atomicfile) and never rewritten: two entries with the
// same image share one file, and a log written from entries read from
// another (a fork, WriteNew) stores the images they hold in its own
// folder, so it carries them along.

// ImageDir returns the folder of the images of the log at path: the
// log's name with ".images" for its ".jsonl" ("S.jsonl" → "S.images").
func ImageDir(path string) string {
	return strings.TrimSuffix(path, ".jsonl") + ".images"
}

// ImageFile returns the name, in ImageDir, of the image of the given
// media type whose bytes have the SHA-256 sum sum (lowercase hex).
func ImageFile(sum, mediaType string) string {
	return "sha256-" + sum + "." + imageExt(mediaType)
}

// imageExt is the file extension of an image's media type.
func imageExt(mediaType string) string {
	switch mediaType {
	case "image/png":
		return "png"
	case "image/jpeg":
		return "jpg"
	case "image/gif":
		return "gif"
	case "image/webp":
		return "webp"
	}
	return "img"
}

// hasInlineImages reports whether m holds an image block with its data,
// which the writer stores beside the log.
func hasInlineImages(m *conversation.Message) bool {
	for i := range m.Content {
		b := &m.Content[i]
		if b.Type == conversation.TypeImage && b.Data != "" {
			return true
		}
		for j := range b.Content {
			if c := &b.Content[j]; c.Type == conversation.TypeImage && c.Data != "" {
				return true
			}
		}
	}
	return false
}

// storeImages writes each image of m with data to dir (once per content)
// and returns m as the log writes it: its image blocks by sha256, media
// type and size. m itself is not changed; a message without images is
// returned as it is.
func storeImages(dir string, m *conversation.Message) (*conversation.Message, error) {
	if !hasInlineImages(m) {
		return m, nil
	}
	out := *m
	out.Content = make([]conversation.Block, len(m.Content))
	for i, b := range m.Content {
		if len(b.Content) > 0 {
			inner := make([]conversation.Block, len(b.Content))
			for j, c := range b.Content {
				s, err := storeImage(dir, c)
				if err != nil {
					return nil, fmt.Errorf("content[%d]: content[%d]: %w", i, j, err)
				}
				inner[j] = s
			}
			b.Content = inner
		}
		s, err := storeImage(dir, b)
		if err != nil {
			return nil, fmt.Errorf("content[%d]: %w", i, err)
		}
		out.Content[i] = s
	}
	return &out, nil
}

// storeImage writes an image block's data to dir, unless the file is
// there already, and returns the block without its data. Any other block
// is returned as it is.
func storeImage(dir string, b conversation.Block) (conversation.Block, error) {
	if b.Type != conversation.TypeImage || b.Data == "" {
		return b, nil
	}
	raw, err := base64.StdEncoding.DecodeString(b.Data)
	if err != nil {
		return b, fmt.Errorf("image block: data is not base64: %w", err)
	}
	sum := sha256.Sum256(raw)
	hexSum := hex.EncodeToString(sum[:])
	path := filepath.Join(dir, ImageFile(hexSum, b.MediaType))
	if err := writeImage(path, raw); err != nil {
		return b, err
	}
	b.Data, b.Sha256, b.Size = "", hexSum, int64(len(raw))
	return b, nil
}

// writeImage writes raw to path whole, unless a file is there already
// (its name is its content's sum).
func writeImage(path string, raw []byte) error {
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("store image: %w", err)
	}
	t, err := atomicfile.Create(context.Background(), path)
	if err != nil {
		return fmt.Errorf("store image: %w", err)
	}
	if _, err := t.Write(raw); err != nil {
		t.Abort()
		return fmt.Errorf("store image %s: %w", path, err)
	}
	if err := t.Commit(false); err != nil && !errors.Is(err, atomicfile.ErrExists) {
		return fmt.Errorf("store image: %w", err)
	}
	return nil
}

// imageLoader fills the data of a log's image blocks back in from the
// log's image folder, reading each file once.
type imageLoader struct {
	path     string // the log
	dir      string
	data     map[string]string // base64 of each file read, by name
	warnings []string
}

func newImageLoader(path string) *imageLoader {
	return &imageLoader{path: path, dir: ImageDir(path)}
}

// restore fills in the images of es's messages. A message is changed in
// place only when it names an image (a text-only log costs one look at
// each block). An image whose file is missing or does not hold what its
// sum says becomes a text block saying so, with a warning.
func (l *imageLoader) restore(es []Entry) {
	for i := range es {
		m := es[i].Message
		if m == nil || !namesImages(m) {
			continue
		}
		for j := range m.Content {
			b := &m.Content[j]
			l.block(b, es[i].ID)
			for k := range b.Content {
				l.block(&b.Content[k], es[i].ID)
			}
		}
	}
}

// namesImages reports whether m holds an image block stored by sum.
func namesImages(m *conversation.Message) bool {
	for i := range m.Content {
		b := &m.Content[i]
		if b.Type == conversation.TypeImage && b.Sha256 != "" {
			return true
		}
		for j := range b.Content {
			if c := &b.Content[j]; c.Type == conversation.TypeImage && c.Sha256 != "" {
				return true
			}
		}
	}
	return false
}

func (l *imageLoader) block(b *conversation.Block, entry string) {
	if b.Type != conversation.TypeImage || b.Sha256 == "" {
		return
	}
	name := ImageFile(b.Sha256, b.MediaType)
	data, err := l.load(name, b.Sha256, b.Size)
	if err != nil {
		path := filepath.Join(l.dir, name)
		l.warnings = append(l.warnings, fmt.Sprintf("session log %s entry %s: image %s: %v; the image reads as a line of text saying so", l.path, entry, path, err))
		what := "damaged"
		if errors.Is(err, errImageMissing) {
			what = "missing"
		}
		*b = conversation.Text(fmt.Sprintf("[image sha256-%s %s: %s]", b.Sha256, what, path))
		return
	}
	b.Data, b.Sha256, b.Size = data, "", 0
}

// errImageMissing is the error of an image whose file is not there.
var errImageMissing = errors.New("the file is missing")

// load returns the base64 of the image file name, checked against its
// sum and size.
func (l *imageLoader) load(name, sum string, size int64) (string, error) {
	if d, ok := l.data[name]; ok {
		return d, nil
	}
	raw, err := os.ReadFile(filepath.Join(l.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return "", errImageMissing
	} else if err != nil {
		return "", err
	}
	got := sha256.Sum256(raw)
	if hex.EncodeToString(got[:]) != sum {
		return "", fmt.Errorf("the file's content does not match its sha256 (%d bytes)", len(raw))
	}
	if size != 0 && int64(len(raw)) != size {
		return "", fmt.Errorf("the file holds %d bytes, the log says %d", len(raw), size)
	}
	d := base64.StdEncoding.EncodeToString(raw)
	if l.data == nil {
		l.data = map[string]string{}
	}
	l.data[name] = d
	return d, nil
}

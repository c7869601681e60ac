package sessionlog

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// pngBytes is a 1×1 PNG.
var pngBytes, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// imageMessages are a user message with an image and a tool result with
// the same image and a GIF.
func imageMessages() []conversation.Message {
	img := conversation.Image("image/png", base64.StdEncoding.EncodeToString(pngBytes))
	gif := conversation.Image("image/gif", base64.StdEncoding.EncodeToString([]byte("GIF89a-not-really")))
	return []conversation.Message{
		{Role: conversation.RoleUser, Content: []conversation.Block{conversation.Text("look:"), img}},
		conversation.AssistantText("ok"),
		{Role: conversation.RoleTool, Content: []conversation.Block{
			{Type: conversation.TypeToolResult, ToolUseID: "t1", Content: []conversation.Block{conversation.Text("x.png"), img, gif}},
		}},
	}
}

func writeImageLog(t *testing.T) (string, []conversation.Message) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "S.jsonl")
	w, err := Create(path, Header{Cwd: "/p"})
	require.NoError(t, err)
	msgs := imageMessages()
	for _, m := range msgs {
		got, err := w.Append(MessageEntry(m))
		require.NoError(t, err)
		require.Equal(t, m, *got[0].Message, "the appended entry keeps its image data")
	}
	require.NoError(t, w.Close())
	return path, msgs
}

func TestImagesStoredOnceBeside(t *testing.T) {
	t.Parallel()
	path, msgs := writeImageLog(t)
	dir := filepath.Join(filepath.Dir(path), "S.images")
	require.Equal(t, dir, ImageDir(path))
	pngName := "sha256-" + sumOf(pngBytes) + ".png"
	require.ElementsMatch(t, []string{pngName, "sha256-" + sumOf([]byte("GIF89a-not-really")) + ".gif"}, dirNames(t, dir),
		"the PNG used twice is one file")
	stored, err := os.ReadFile(filepath.Join(dir, pngName))
	require.NoError(t, err)
	require.Equal(t, pngBytes, stored)

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(raw), base64.StdEncoding.EncodeToString(pngBytes), "no base64 in the log")
	require.Contains(t, string(raw), `{"type":"image","media_type":"image/png","sha256":"`+sumOf(pngBytes)+`","size":70}`)

	// Every way of reading the log gives the images back whole.
	log, err := Read(path)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	require.Equal(t, msgs, log.Messages())
	loaded, err := Load(path)
	require.NoError(t, err)
	require.Empty(t, loaded.Warnings)
	require.Equal(t, msgs, loaded.Messages())
	tree, err := Scan(path)
	require.NoError(t, err)
	chain, err := tree.Chain(tree.Leaf())
	require.NoError(t, err)
	es, err := tree.Entries(chain...)
	require.NoError(t, err)
	require.Equal(t, msgs[2], *es[2].Message)

	// Appending the same image again (a resumed writer) adds no file and
	// leaves the one there as it is.
	before, err := os.Stat(filepath.Join(dir, pngName))
	require.NoError(t, err)
	w, _, err := Open(path)
	require.NoError(t, err)
	_, err = w.Append(MessageEntry(msgs[0]))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Len(t, dirNames(t, dir), 2)
	after, err := os.Stat(filepath.Join(dir, pngName))
	require.NoError(t, err)
	require.Equal(t, before.ModTime(), after.ModTime())
}

func TestImageMissingOrDamaged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage func(file string)
		word   string
	}{
		{"missing", func(file string) { require.NoError(t, os.Remove(file)) }, "missing"},
		{"damaged", func(file string) { require.NoError(t, os.WriteFile(file, []byte("not the png"), 0o600)) }, "damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path, msgs := writeImageLog(t)
			file := filepath.Join(ImageDir(path), "sha256-"+sumOf(pngBytes)+".png")
			tc.damage(file)
			placeholder := "[image sha256-" + sumOf(pngBytes) + " " + tc.word + ": " + file + "]"

			log, err := Read(path)
			require.NoError(t, err, "the rest of the log is not lost")
			got := log.Messages()
			require.Len(t, got, 3)
			require.Equal(t, conversation.Text(placeholder), got[0].Content[1])
			require.Equal(t, conversation.Text(placeholder), got[2].Content[0].Content[1])
			require.Equal(t, msgs[2].Content[0].Content[2], got[2].Content[0].Content[2], "the GIF is whole")
			require.Len(t, log.Warnings, 2, "one per entry")
			for i, w := range log.Warnings {
				require.Contains(t, w, file)
				require.Contains(t, w, log.Entries[[]int{0, 2}[i]].ID)
			}
			loaded, err := Load(path)
			require.NoError(t, err)
			require.Equal(t, got, loaded.Messages())
			require.Len(t, loaded.Warnings, 2)
		})
	}
}

func TestOldInlineImagesRead(t *testing.T) {
	t.Parallel()
	data := base64.StdEncoding.EncodeToString(pngBytes)
	path := writeFile(t, "old.jsonl", testHeader+"\n"+
		line("e1", "", `{"role":"user","content":[{"type":"image","data":"`+data+`","media_type":"image/png"}]}`)+"\n")
	log, err := Read(path)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	require.Equal(t, []conversation.Message{{Role: conversation.RoleUser, Content: []conversation.Block{conversation.Image("image/png", data)}}}, log.Messages())
	require.NoDirExists(t, ImageDir(path), "reading writes nothing")
}

func TestImageBadSumRefused(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "bad.jsonl", testHeader+"\n"+
		line("e1", "", `{"role":"user","content":[{"type":"image","media_type":"image/png","sha256":"../../../etc/passwd"}]}`)+"\n")
	_, err := Read(path)
	require.ErrorContains(t, err, "line 2")
	require.ErrorContains(t, err, "not 64 lowercase hex digits")
}

func TestForkedLogCarriesImages(t *testing.T) {
	t.Parallel()
	path, msgs := writeImageLog(t)
	tree, err := Scan(path)
	require.NoError(t, err)
	chain, err := tree.Chain(tree.Leaf())
	require.NoError(t, err)
	es, err := tree.Entries(chain...)
	require.NoError(t, err)
	dst := filepath.Join(t.TempDir(), "F.jsonl")
	_, err = WriteNew(t.Context(), dst, Header{Cwd: "/p", ParentSession: "s"}, es)
	require.NoError(t, err)
	require.Len(t, dirNames(t, ImageDir(dst)), 2)
	require.NoError(t, os.RemoveAll(ImageDir(path)), "the fork needs nothing of its source")
	log, err := Read(dst)
	require.NoError(t, err)
	require.Empty(t, log.Warnings)
	require.Equal(t, msgs, log.Messages())
}

func TestImageDirName(t *testing.T) {
	t.Parallel()
	require.Equal(t, filepath.Join("a", "S.images"), ImageDir(filepath.Join("a", "S.jsonl")))
	require.Equal(t, "log.images", ImageDir("log"))
	require.True(t, strings.HasSuffix(ImageFile(sumOf(nil), "image/jpeg"), ".jpg"))
	require.True(t, strings.HasSuffix(ImageFile(sumOf(nil), "image/x-unknown"), ".img"))
}

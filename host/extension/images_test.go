package extension

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
	"github.com/panto-dev/panto/internal/pb"
)

// An extension's images are fitted to the providers' limits: a large
// one scaled down, a damaged one left out with a note saying why, a type
// panto does not take left out too.
func TestExtensionImagesAreFitted(t *testing.T) {
	var big bytes.Buffer
	require.NoError(t, png.Encode(&big, image.NewRGBA(image.Rect(0, 0, 4000, 1000))))
	res := withImages(conversation.ToolResult("c1", "shot", false), []*pb.Image{
		{MediaType: "image/png", Data: big.Bytes()},
		{MediaType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nbroken")},
		{MediaType: "image/bmp", Data: []byte("BM")},
	})
	require.Len(t, res.Content, 4) // the text, the image, two notes
	img := res.Content[1]
	require.Equal(t, conversation.TypeImage, img.Type)
	data, err := base64.StdEncoding.DecodeString(img.Data)
	require.NoError(t, err)
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	require.NoError(t, err)
	require.Equal(t, 1568, cfg.Width, "scaled down to the long edge the providers take")
	require.Contains(t, res.Content[2].Text, "was left out")
	require.Contains(t, res.Content[3].Text, `"image/bmp"`)
}

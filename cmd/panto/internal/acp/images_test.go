package acp

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/conversation"
)

// An ACP image content block becomes an image block of the message,
// named by its URI; what is not an image is refused by its index.
func TestPromptImages(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, image.NewGray(image.Rect(0, 0, 6, 4))))
	data := base64.StdEncoding.EncodeToString(b.Bytes())
	uri := "file:///home/ann/shot.png"
	text, blocks, err := promptContent([]acpsdk.ContentBlock{
		acpsdk.TextBlock("what is this?"),
		{Image: &acpsdk.ContentBlockImage{Type: "image", MimeType: "image/png", Data: data, Uri: &uri}},
	})
	require.NoError(t, err)
	require.Equal(t, "what is this?", text)
	require.Len(t, blocks, 2)
	require.Equal(t, conversation.TypeText, blocks[0].Type)
	require.Contains(t, blocks[0].Text, "shot.png, ")
	require.Contains(t, blocks[0].Text, "6×4")
	require.Equal(t, conversation.Image("image/png", data), blocks[1])

	_, _, err = promptContent([]acpsdk.ContentBlock{
		acpsdk.TextBlock("and this?"),
		{Image: &acpsdk.ContentBlockImage{Type: "image", MimeType: "image/png", Data: base64.StdEncoding.EncodeToString([]byte("no"))}},
	})
	require.ErrorContains(t, err, "prompt[1]: attach image 2: not a PNG, JPEG, GIF or WebP image")
	_, _, err = promptContent([]acpsdk.ContentBlock{{Image: &acpsdk.ContentBlockImage{Type: "image", Data: "%%%"}}})
	require.ErrorContains(t, err, "prompt[0]: image data: not base64")
}

package acp

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"path"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/panto-dev/panto/cmd/panto/internal/app"
	"github.com/panto-dev/panto/cmd/panto/internal/attach"
	"github.com/panto-dev/panto/cmd/panto/internal/termtext"
	"github.com/panto-dev/panto/conversation"
)

// What a client's requests carry, read into panto's terms.

// clientSource is the source of what the client gave (its prompt, its
// MCP servers), as panto prompt and /tree show it.
const clientSource = "ACP client"

// promptMeta is _meta.systemPrompt: a string replaces the seed, an
// object {append: "..."} is appended, as acpx and the Claude adapter send
// it.
type promptMeta struct {
	text    string
	replace bool
}

func (p *promptMeta) given() *app.Given {
	if p == nil {
		return nil
	}
	return &app.Given{Text: p.text, Source: clientSource, Replace: p.replace}
}

// givenPrompt reads _meta.systemPrompt; nil when there is none.
func givenPrompt(meta map[string]any) (*promptMeta, error) {
	v, ok := meta["systemPrompt"]
	if !ok || v == nil {
		return nil, nil
	}
	switch v := v.(type) {
	case string:
		if strings.TrimSpace(v) == "" {
			return nil, invalidParams("_meta.systemPrompt is empty: give the prompt's text, or {\"append\": TEXT}")
		}
		return &promptMeta{text: v, replace: true}, nil
	case map[string]any:
		a, ok := v["append"].(string)
		if !ok {
			return nil, invalidParams("_meta.systemPrompt: want a string (it replaces the prompt) or {\"append\": TEXT}")
		}
		if strings.TrimSpace(a) == "" {
			return nil, nil
		}
		return &promptMeta{text: a}, nil
	}
	return nil, invalidParams(fmt.Sprintf("_meta.systemPrompt: want a string or {\"append\": TEXT}, not %T", v))
}

// promptContent is the user's message of a prompt's blocks: text as it
// is, an embedded resource as the file's content attached, a link as a
// mention of it, an image as an image block (after a text naming it; a
// PNG, JPEG, GIF or WebP image, fitted to the providers' limits by
// attach). panto does not
// take audio (it does not advertise it).
func promptContent(blocks []acpsdk.ContentBlock) (string, []conversation.Block, error) {
	var images []conversation.Block
	for i, b := range blocks {
		if b.Image == nil {
			continue
		}
		im, err := promptImage(i, b.Image)
		if err != nil {
			return "", nil, err
		}
		images = append(images, im.Blocks()...)
	}
	text, err := promptText(blocks)
	return text, images, err
}

// promptImage is the image of prompt[i].
func promptImage(i int, b *acpsdk.ContentBlockImage) (attach.Image, error) {
	name := fmt.Sprintf("image %d", i+1)
	if b.Uri != nil && *b.Uri != "" {
		name = path.Base(displayURI(*b.Uri))
	}
	data, err := base64.StdEncoding.DecodeString(b.Data)
	if err != nil {
		return attach.Image{}, invalidParams(fmt.Sprintf("prompt[%d]: image data: not base64: %v", i, err))
	}
	im, err := attach.FromBytes(name, data)
	if err != nil {
		return attach.Image{}, invalidParams(fmt.Sprintf("prompt[%d]: %v", i, err))
	}
	return im, nil
}

// promptText is the text of a prompt's blocks (promptContent); an
// image is skipped here.
func promptText(blocks []acpsdk.ContentBlock) (string, error) {
	var parts []string
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.Resource != nil:
			r := b.Resource.Resource
			switch {
			case r.TextResourceContents != nil:
				parts = append(parts, attached(r.TextResourceContents.Uri, r.TextResourceContents.Text))
			case r.BlobResourceContents != nil:
				parts = append(parts, fmt.Sprintf("[attached: %s (binary content, not shown)]", displayURI(r.BlobResourceContents.Uri)))
			}
		case b.ResourceLink != nil:
			parts = append(parts, fmt.Sprintf("[@%s](%s)", b.ResourceLink.Name, b.ResourceLink.Uri))
		case b.Image != nil:
		case b.Audio != nil:
			return "", invalidParams(fmt.Sprintf("prompt[%d]: panto takes text, images and resources, not audio (see its promptCapabilities)", i))
		default:
			return "", invalidParams(fmt.Sprintf("prompt[%d]: a content block of no known type", i))
		}
	}
	text := strings.Join(parts, "\n\n")
	if strings.TrimSpace(text) == "" {
		return "", invalidParams("prompt: nothing to send (no text)")
	}
	return text, nil
}

// attached is a file's content as the user's message carries it.
func attached(uri, text string) string {
	return fmt.Sprintf("<file path=%q>\n%s\n</file>", displayURI(uri), strings.TrimRight(text, "\n"))
}

// displayURI is a file: URI's path, any other URI as it is.
func displayURI(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Scheme == "file" {
		return u.Path
	}
	return uri
}

// mcpServers are the client's MCP servers as panto's config has them;
// stdio and Streamable HTTP ones (the transports panto advertises).
func mcpServers(in []acpsdk.McpServer) ([]app.MCPServer, error) {
	var out []app.MCPServer
	seen := map[string]bool{}
	for i, m := range in {
		var s app.MCPServer
		switch {
		case m.Stdio != nil:
			s = app.MCPServer{Name: m.Stdio.Name, Command: m.Stdio.Command, Args: m.Stdio.Args}
			if len(m.Stdio.Env) > 0 {
				s.Env = map[string]string{}
				for _, e := range m.Stdio.Env {
					s.Env[e.Name] = e.Value
				}
			}
			if s.Command == "" {
				return nil, invalidParams(fmt.Sprintf("mcpServers[%d] (%s): command is empty", i, s.Name))
			}
		case m.Http != nil:
			s = app.MCPServer{Name: m.Http.Name, URL: m.Http.Url}
			if len(m.Http.Headers) > 0 {
				s.Headers = map[string]string{}
				for _, h := range m.Http.Headers {
					s.Headers[h.Name] = h.Value
				}
			}
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
				return nil, invalidParams(fmt.Sprintf("mcpServers[%d] (%s): url %q: want http or https", i, s.Name, s.URL))
			}
		case m.Sse != nil:
			return nil, invalidParams(fmt.Sprintf("mcpServers[%d] (%s): panto speaks MCP over stdio and Streamable HTTP, not SSE (see its mcpCapabilities)", i, m.Sse.Name))
		default:
			return nil, invalidParams(fmt.Sprintf("mcpServers[%d]: a server of no transport panto knows", i))
		}
		if s.Name == "" {
			return nil, invalidParams(fmt.Sprintf("mcpServers[%d]: name is empty", i))
		}
		if seen[s.Name] {
			return nil, invalidParams(fmt.Sprintf("mcpServers[%d]: two servers are named %q", i, s.Name))
		}
		seen[s.Name] = true
		s.Source = clientSource
		out = append(out, s)
	}
	return out, nil
}

// maxTitleRunes bounds a session's title.
const maxTitleRunes = 80

// title is a session's title: its first typed message's first line.
func title(first string) string {
	return cut(termtext.OneLine(firstLine(first), 4*maxTitleRunes), maxTitleRunes)
}

package catalog

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Size caps of what one result shows a model. Text beyond MaxResultText is
// cut with a visible note; a larger image is replaced by its placeholder
// line (5 MB is also the largest image the Anthropic API takes).
const (
	MaxResultText  = 100_000
	MaxResultImage = 5 << 20
)

// render turns an outcome into what a model reads.
func (o outcome) render() ToolResult {
	tr := ToolResult{Name: o.name, ServerID: o.id, Tool: o.tool}
	if o.res == nil {
		tr.Text = o.text
		tr.Blocks = []Block{{Type: "text", Text: o.text}}
		tr.IsError = true
		return tr
	}
	tr.Result = o.res
	tr.UI = o.ui
	tr.IsError = o.res.IsError
	tr.Text, tr.Blocks = renderContent(o.res)
	return tr
}

// renderContent renders a result's content: text parts joined with
// newlines; structuredContent as JSON when there is no text part; images as
// image blocks (and, in Text, a one-line placeholder); audio, resource links
// and embedded resources as lines, with an embedded text resource's text.
// Text, and the text blocks together, are capped at MaxResultText with a
// "[truncated: N more bytes]" note.
func renderContent(res *mcp.CallToolResult) (string, []Block) {
	var lines []string // every line, placeholders included: Text
	var blocks []Block // text runs and images: Blocks
	addText := func(s string) {
		lines = append(lines, s)
		if n := len(blocks); n > 0 && blocks[n-1].Type == "text" {
			blocks[n-1].Text += "\n" + s
			return
		}
		blocks = append(blocks, Block{Type: "text", Text: s})
	}
	if !hasTextContent(res.Content) && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			addText(string(b))
		}
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			addText(c.Text)
		case *mcp.ImageContent:
			if len(c.Data) > MaxResultImage {
				addText(say(textImageTooLarge, c.MIMEType, len(c.Data)))
				continue
			}
			lines = append(lines, say(textImage, c.MIMEType, len(c.Data)))
			blocks = append(blocks, Block{Type: "image", MIMEType: c.MIMEType, Data: base64.StdEncoding.EncodeToString(c.Data)})
		case *mcp.AudioContent:
			addText(say(textAudio, c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			name := c.Name
			if name == "" {
				name = c.Title
			}
			if name == "" {
				addText(say(textResourceNoName, c.URI))
			} else {
				addText(say(textResourceLink, c.URI, name))
			}
		case *mcp.EmbeddedResource:
			r := c.Resource
			switch {
			case r == nil:
			case r.Blob != nil:
				addText(say(textResourceBlob, r.URI, r.MIMEType, len(r.Blob)))
			case r.Text != "":
				addText(say(textResourceNoName, r.URI) + "\n" + r.Text)
			default:
				addText(say(textResourceNoName, r.URI))
			}
		}
	}
	if len(lines) == 0 {
		addText(textNoContent)
	}
	return capText(strings.Join(lines, "\n")), capTextBlocks(blocks)
}

// hasTextContent reports whether content has a text part. A result with
// one is shown by its text alone: the MCP spec asks a server returning
// structuredContent to repeat it as text, so showing both would double it.
func hasTextContent(content []mcp.Content) bool {
	for _, c := range content {
		if _, ok := c.(*mcp.TextContent); ok {
			return true
		}
	}
	return false
}

// capTextBlocks caps the text blocks together at MaxResultText, as capText
// does Text, so a model reading Blocks sees no more than one reading Text.
// The block that crosses the cap is cut with a "[truncated: N more bytes]"
// note counting every text byte left out; later text blocks are dropped and
// later images kept, since images have their own cap (MaxResultImage).
func capTextBlocks(blocks []Block) []Block {
	budget := MaxResultText
	for i := 0; i < len(blocks); i++ {
		if blocks[i].Type != "text" {
			continue
		}
		if len(blocks[i].Text) <= budget {
			budget -= len(blocks[i].Text)
			continue
		}
		kept := truncateUTF8(blocks[i].Text, budget)
		more := len(blocks[i].Text) - len(kept)
		for _, b := range blocks[i+1:] {
			if b.Type == "text" {
				more += len(b.Text)
			}
		}
		blocks[i].Text = kept + "\n" + say(textTruncated, more)
		rest := blocks[:i+1]
		for _, b := range blocks[i+1:] {
			if b.Type != "text" {
				rest = append(rest, b)
			}
		}
		return rest
	}
	return blocks
}

// capText cuts s to MaxResultText bytes (on a rune boundary) and says how
// much it left out.
func capText(s string) string {
	if len(s) <= MaxResultText {
		return s
	}
	kept := truncateUTF8(s, MaxResultText)
	return kept + "\n" + say(textTruncated, len(s)-len(kept))
}

package mcpclient

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on the icons a server sends with its implementation, tools,
// prompts, resources and templates: a page shows them, so they are
// checked like any markup from the network.
const (
	maxIcons       = 8
	maxIconDataURI = 64 << 10
	maxIconSrc     = 2048 // an https URL's length
)

// iconDataType is a data: URI's media type that an <img> shows without
// running anything: raster images, and SVG (an <img> runs no script in it).
var iconDataType = lazyRegexp(`^data:image/(png|jpeg|jpg|gif|webp|svg\+xml)(;[^,]*)?,`)

var iconSize = lazyRegexp(`^([1-9][0-9]{0,4}x[1-9][0-9]{0,4}|any)$`)

// iconProblem says why an icon's src cannot reach the page, or "".
func iconProblem(src string) string {
	lower := strings.ToLower(src)
	switch {
	case strings.HasPrefix(lower, "data:"):
		if len(src) > maxIconDataURI {
			return fmt.Sprintf("a data: URI of %d bytes (at most %d)", len(src), maxIconDataURI)
		}
		if !iconDataType().MatchString(lower) {
			return "a data: URI that is not a PNG, JPEG, GIF, WebP or SVG image"
		}
		return ""
	case len(src) > maxIconSrc:
		return fmt.Sprintf("a URL of %d bytes (at most %d)", len(src), maxIconSrc)
	}
	u, err := url.Parse(src)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return "not an https URL or an image data: URI"
	}
	return ""
}

// safeIcons returns the icons of what (a tool "x", …) that may reach the
// page: https URLs and image data: URIs, at most maxIcons, with sizes of
// the form WxH or "any" and a theme of light or dark (others are left
// out). A warning event names each icon left out.
func (c *Client) safeIcons(what string, icons []mcp.Icon) []mcp.Icon {
	if len(icons) == 0 {
		return icons
	}
	var out []mcp.Icon
	for i, ic := range icons {
		if len(out) == maxIcons {
			c.emit("warning", Warning{Message: fmt.Sprintf("mcp: %s has %d icons; the first %d are kept", what, len(icons), maxIcons)})
			break
		}
		if why := iconProblem(ic.Source); why != "" {
			c.emit("warning", Warning{Message: fmt.Sprintf("mcp: icon %d of %s is left out: its src is %s", i+1, what, why)})
			continue
		}
		var sizes []string
		for _, s := range ic.Sizes {
			if iconSize().MatchString(s) {
				sizes = append(sizes, s)
			}
		}
		ic.Sizes = sizes
		if ic.Theme != "light" && ic.Theme != "dark" {
			ic.Theme = ""
		}
		if ic.MIMEType != "" && !strings.HasPrefix(strings.ToLower(ic.MIMEType), "image/") {
			ic.MIMEType = ""
		}
		out = append(out, ic)
	}
	return out
}

package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpwasm/mcpwasm/mcperr"
)

// maxBody caps every response body this package reads.
const maxBody = 1 << 20

// errNotFound marks a probe that found nothing there (non-200).
var errNotFound = errors.New("not found")

// getJSON GETs url and decodes a JSON object into v, reading at most maxBody
// bytes. A non-200 status returns an error wrapping errNotFound.
func getJSON(ctx context.Context, c *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		if mcperr.CodeOf(err, "") == mcperr.Protocol {
			// Refused, not absent: a redirect to another origin (the
			// HTTP client keeps requests on their origin). Looking
			// elsewhere would hide an attack as a missing document.
			return redactURLError(err)
		}
		return fmt.Errorf("%w: %v", errNotFound, redactURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
		return fmt.Errorf("%w: status %d", errNotFound, resp.StatusCode)
	}
	if !jsonContentType(resp.Header.Get("Content-Type")) {
		return fmt.Errorf("content type %q is not application/json", sanitize(resp.Header.Get("Content-Type")))
	}
	return decodeCapped(resp.Body, v)
}

// jsonContentType reports whether a metadata document of this content type
// is read as JSON. RFC 8414 §3.2 and RFC 9728 §3.2 say application/json;
// metadata served as a static file often comes without an extension, and
// static hosts label it text/plain or application/octet-stream (or not at
// all). Those are read, and must still decode as a JSON object; a type
// that says the body is something else (an HTML page, a script) is not.
func jsonContentType(ct string) bool {
	if strings.TrimSpace(ct) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch mt {
	case "application/json", "text/json", "text/plain", "application/octet-stream", "binary/octet-stream":
		return true
	}
	return strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// decodeCapped decodes one JSON object of at most maxBody bytes.
func decodeCapped(r io.Reader, v any) error {
	body, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return fmt.Errorf("reading body: %v", err)
	}
	if len(body) > maxBody {
		return fmt.Errorf("response larger than %d bytes", maxBody)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errors.New("malformed JSON")
	}
	var doc any
	_ = json.Unmarshal(body, &doc)
	return checkShape(doc, "", 0)
}

// Bounds on a metadata document's shape. Real documents list a handful of
// scopes, methods and servers; a document past these is built to make the
// client send huge authorization URLs or loop over attacker-sized lists.
const (
	maxMetaList   = 256
	maxMetaString = 8 << 10
	maxMetaDepth  = 16
)

// checkShape refuses a document with a list longer than maxMetaList, a
// string longer than maxMetaString or nesting deeper than maxMetaDepth;
// the error names where (path, "" at the top).
func checkShape(v any, path string, depth int) error {
	where := "the document"
	if path != "" {
		where = path
	}
	if depth > maxMetaDepth {
		return fmt.Errorf("%s is nested deeper than %d levels", where, maxMetaDepth)
	}
	switch v := v.(type) {
	case string:
		if len(v) > maxMetaString {
			return fmt.Errorf("%s is a string longer than %d bytes", where, maxMetaString)
		}
	case []any:
		if len(v) > maxMetaList {
			return fmt.Errorf("%s has %d entries (at most %d are accepted)", where, len(v), maxMetaList)
		}
		for i, e := range v {
			if err := checkShape(e, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		if len(v) > maxMetaList {
			return fmt.Errorf("%s has %d members (at most %d are accepted)", where, len(v), maxMetaList)
		}
		for k, e := range v {
			if len(k) > maxMetaString {
				return fmt.Errorf("%s has a member name longer than %d bytes", where, maxMetaString)
			}
			name := sanitize(k)
			if path != "" {
				name = path + "." + name
			}
			if err := checkShape(e, name, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// redactURLError drops the URL from a *url.Error (it may carry query
// parameters) and keeps the cause.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

package catalog

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// checkArgs validates a call's arguments against the tool's input schema
// and returns what is wrong, naming the property, or "" when they pass. A
// schema this package cannot use (another draft, remote references) is not
// checked here; the server still checks.
func (c *Catalog) checkArgs(e *entry, t *mcp.Tool, args map[string]any) string {
	c.mu.Lock()
	rs, ok := e.schemas[t.Name]
	c.mu.Unlock()
	if !ok {
		rs = resolveSchema(t.InputSchema)
		c.mu.Lock()
		if e.schemas == nil {
			e.schemas = map[string]*jsonschema.Resolved{}
		}
		e.schemas[t.Name] = rs
		c.mu.Unlock()
	}
	if rs == nil {
		return ""
	}
	if err := rs.Validate(args); err != nil {
		return describeInvalid(err)
	}
	return ""
}

// resolveSchema prepares a tool's input schema for validation, or returns
// nil when it cannot be used. $schema is dropped: servers declare drafts the
// validator does not name (draft-04) for schemas it validates correctly, and
// one it cannot read fails to unmarshal or resolve instead.
func resolveSchema(schema any) *jsonschema.Resolved {
	if schema == nil {
		return nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return nil
	}
	delete(m, "$schema")
	b, _ = json.Marshal(m)
	var s jsonschema.Schema
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil
	}
	return rs
}

// describeInvalid turns a validation error ("validating root: validating
// /properties/o: validating /properties/o/properties/x: enum: …") into
// `property "o.x": enum: …`.
func describeInvalid(err error) string {
	msg := err.Error()
	where := ""
	for {
		const prefix = "validating "
		if !strings.HasPrefix(msg, prefix) {
			break
		}
		rest := msg[len(prefix):]
		i := strings.Index(rest, ": ")
		if i < 0 {
			break
		}
		if loc := rest[:i]; loc != "root" {
			where = loc
		}
		msg = rest[i+2:]
	}
	if where == "" {
		return detail(msg)
	}
	return detail(fmt.Sprintf("property %q: %s", propertyPath(where), msg))
}

// propertyPath turns a schema location ("/properties/o/items/properties/x")
// into the instance path a model knows ("o[].x").
func propertyPath(loc string) string {
	var b strings.Builder
	parts := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	for i := 0; i < len(parts); i++ {
		switch p := parts[i]; p {
		case "properties", "patternProperties":
			if i+1 < len(parts) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(strings.NewReplacer("~1", "/", "~0", "~").Replace(parts[i+1]))
				i++
			}
		case "items", "additionalItems", "prefixItems":
			b.WriteString("[]")
		case "additionalProperties":
			b.WriteString(".*")
		}
	}
	if b.Len() == 0 {
		return loc
	}
	return b.String()
}

package catalog

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// maxSchemaDepth bounds the nesting GeminiSchema follows (and $ref
// inlining, which can nest without end for a recursive schema).
const maxSchemaDepth = 12

// geminiTypes are the types of Gemini's Schema object.
var geminiTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "array": true, "object": true}

// geminiFormats are the formats Gemini's Schema accepts (others are
// refused by the API).
var geminiFormats = map[string]bool{"enum": true, "date-time": true, "float": true, "double": true, "int32": true, "int64": true}

// GeminiSchema converts a JSON Schema (as a map) into the OpenAPI 3.0
// subset Gemini's function declarations take: type, format, title,
// description, nullable, enum (strings), items, properties, required,
// propertyOrdering, anyOf, default, example, minimum, maximum, minLength,
// maxLength, pattern, minItems, maxItems, minProperties, maxProperties.
//
// What the subset cannot say is rewritten where the meaning survives —
// local $ref into $defs/definitions inlined, const as a one-value enum, a
// type list such as ["string", "null"] as type plus nullable (several
// non-null types as anyOf), oneOf as anyOf — and dropped otherwise; dropped
// names what was lost (additionalProperties that allow extra keys,
// patternProperties, allOf, not, recursive $ref, non-string enums, …), for
// the caller to tell the model. additionalProperties: false is dropped
// without a note: the properties listed say as much to a model.
func GeminiSchema(schema map[string]any) (map[string]any, []string) {
	g := &geminiConv{dropped: map[string]bool{}, defs: map[string]map[string]any{}}
	for _, key := range []string{"$defs", "definitions"} {
		if defs, ok := schema[key].(map[string]any); ok {
			for name, d := range defs {
				if m, ok := d.(map[string]any); ok {
					g.defs["#/"+key+"/"+name] = m
				}
			}
		}
	}
	out := g.node(schema, 0, nil)
	if _, ok := out["type"]; !ok {
		out["type"] = "object"
	}
	return out, slices.Sorted(maps.Keys(g.dropped))
}

type geminiConv struct {
	defs    map[string]map[string]any
	dropped map[string]bool
}

func (g *geminiConv) drop(what string) { g.dropped[what] = true }

func (g *geminiConv) node(s map[string]any, depth int, refs []string) map[string]any {
	out := map[string]any{}
	if depth > maxSchemaDepth {
		g.drop("nesting deeper than " + fmt.Sprint(maxSchemaDepth))
		return out
	}
	if ref, ok := s["$ref"].(string); ok {
		def, local := g.defs[ref]
		switch {
		case !local:
			g.drop("$ref")
		case slices.Contains(refs, ref):
			g.drop("$ref (recursive)")
		default:
			maps.Copy(out, g.node(def, depth+1, append(slices.Clone(refs), ref)))
		}
	}
	var extra []string // sentences for the description
	for _, k := range slices.Sorted(maps.Keys(s)) {
		extra = append(extra, g.keyword(k, s[k], out, depth, refs)...)
	}
	keepListedRequired(out)
	if len(extra) > 0 {
		d, _ := out["description"].(string)
		out["description"] = strings.TrimSpace(d + " " + strings.Join(extra, " "))
	}
	return out
}

// geminiIgnored are the keywords dropped without a note: references are
// inlined, the rest is metadata a model does not need.
var geminiIgnored = map[string]bool{"$ref": true, "$defs": true, "definitions": true, "$schema": true, "$id": true,
	"$comment": true, "$anchor": true, "examples": true, "readOnly": true, "writeOnly": true, "deprecated": true,
	"contentEncoding": true, "contentMediaType": true}

// geminiUnsupported are the keywords Gemini's subset cannot say, dropped
// with a note.
var geminiUnsupported = map[string]bool{"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"uniqueItems": true, "contains": true, "minContains": true, "maxContains": true, "dependentRequired": true,
	"dependentSchemas": true, "unevaluatedProperties": true, "unevaluatedItems": true, "propertyNames": true,
	"patternProperties": true, "not": true, "if": true, "then": true, "else": true, "prefixItems": true}

// geminiKept are the keywords kept as they are when their value passes
// the check: numeric bounds, annotations, a true nullable, examples.
var geminiKept = map[string]func(v any) bool{
	"minimum": isNumber, "maximum": isNumber, "minLength": isNumber, "maxLength": isNumber,
	"minItems": isNumber, "maxItems": isNumber, "minProperties": isNumber, "maxProperties": isNumber,
	"title": isString, "description": isString, "pattern": isString,
	"nullable": func(v any) bool { return v == true },
	"default":  func(any) bool { return true },
	"example":  func(any) bool { return true },
}

func isNumber(v any) bool { _, ok := v.(float64); return ok }
func isString(v any) bool { _, ok := v.(string); return ok }

// keyword converts one keyword k of a schema into out, returning sentences
// for the description.
func (g *geminiConv) keyword(k string, v any, out map[string]any, depth int, refs []string) []string {
	if keep, ok := geminiKept[k]; ok {
		if keep(v) {
			out[k] = v
		}
		return nil
	}
	switch {
	case geminiIgnored[k]:
	case geminiUnsupported[k]:
		g.drop(k)
	case k == "type":
		g.typ(v, out)
	case k == "format":
		if str, ok := v.(string); ok && geminiFormats[str] {
			out[k] = str
		} else {
			g.drop("format")
		}
	case k == "enum":
		if list, ok := v.([]any); ok {
			return g.enum(list, out)
		}
	case k == "const":
		return g.enum([]any{v}, out)
	default:
		g.structural(k, v, out, depth, refs)
	}
	return nil
}

// structural converts the keywords that hold schemas or names:
// properties, required, propertyOrdering, items, anyOf, oneOf, allOf,
// additionalProperties; any other keyword is dropped with a note.
func (g *geminiConv) structural(k string, v any, out map[string]any, depth int, refs []string) {
	switch k {
	case "properties":
		if props, ok := v.(map[string]any); ok {
			conv := make(map[string]any, len(props))
			for name, p := range props {
				if pm, ok := p.(map[string]any); ok {
					conv[name] = g.node(pm, depth+1, refs)
				} else {
					conv[name] = map[string]any{} // true: anything
				}
			}
			out[k] = conv
		}
	case "required", "propertyOrdering":
		if list, ok := v.([]any); ok {
			var names []any
			for _, n := range list {
				if str, ok := n.(string); ok {
					names = append(names, str)
				}
			}
			out[k] = names
		}
	case "items":
		if m, ok := v.(map[string]any); ok {
			out[k] = g.node(m, depth+1, refs)
		} else {
			g.drop("items")
		}
	case "anyOf", "oneOf":
		g.alternatives(k, v, out, depth, refs)
	case "allOf":
		g.allOf(v, out, depth, refs)
	case "additionalProperties":
		if b, ok := v.(bool); !ok || b {
			g.drop("additionalProperties")
		}
	default:
		g.drop(k)
	}
}

// alternatives converts anyOf (and oneOf, kept as anyOf with a note).
func (g *geminiConv) alternatives(k string, v any, out map[string]any, depth int, refs []string) {
	list, ok := v.([]any)
	if !ok {
		return
	}
	var alts []any
	for _, a := range list {
		if m, ok := a.(map[string]any); ok {
			alts = append(alts, g.node(m, depth+1, refs))
		}
	}
	out["anyOf"] = alts
	if k == "oneOf" {
		g.drop("oneOf (kept as anyOf)")
	}
}

// allOf merges an allOf of one schema into out (what out already says
// wins); a longer allOf is dropped with a note.
func (g *geminiConv) allOf(v any, out map[string]any, depth int, refs []string) {
	if list, ok := v.([]any); ok && len(list) == 1 {
		if m, ok := list[0].(map[string]any); ok {
			for kk, vv := range g.node(m, depth+1, refs) {
				if _, set := out[kk]; !set {
					out[kk] = vv
				}
			}
			return
		}
	}
	g.drop("allOf")
}

// keepListedRequired keeps in required only the names properties lists.
func keepListedRequired(out map[string]any) {
	req, ok := out["required"].([]any)
	if !ok {
		return
	}
	props, _ := out["properties"].(map[string]any)
	var keep []any
	for _, n := range req {
		if _, ok := props[n.(string)]; ok {
			keep = append(keep, n)
		}
	}
	if len(keep) == 0 {
		delete(out, "required")
	} else {
		out["required"] = keep
	}
}

// typ converts "type": a string, or a list whose "null" becomes nullable and
// whose several other types become anyOf.
func (g *geminiConv) typ(v any, out map[string]any) {
	var types []string
	switch t := v.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				types = append(types, s)
			}
		}
	}
	var kept []string
	for _, t := range types {
		switch {
		case t == "null":
			out["nullable"] = true
		case geminiTypes[t]:
			kept = append(kept, t)
		default:
			g.drop("type " + t)
		}
	}
	switch len(kept) {
	case 0:
	case 1:
		out["type"] = kept[0]
	default:
		alts := make([]any, len(kept))
		for i, t := range kept {
			alts[i] = map[string]any{"type": t}
		}
		out["anyOf"] = alts
	}
}

// enum keeps string values (null makes the schema nullable); other values
// cannot be a Gemini enum, so they are listed in the description instead.
func (g *geminiConv) enum(list []any, out map[string]any) []string {
	var strs []any
	var others []string
	for _, v := range list {
		switch v := v.(type) {
		case nil:
			out["nullable"] = true
		case string:
			strs = append(strs, v)
		default:
			b, _ := json.Marshal(v)
			others = append(others, string(b))
		}
	}
	if len(others) > 0 {
		g.drop("enum (non-string values, listed in the description)")
		for _, s := range strs {
			b, _ := json.Marshal(s)
			others = append(others, string(b))
		}
		return []string{"Allowed values: " + strings.Join(others, ", ") + "."}
	}
	if len(strs) > 0 {
		out["enum"] = strs
		if _, ok := out["type"]; !ok {
			out["type"] = "string"
		}
	}
	return nil
}

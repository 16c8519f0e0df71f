package mcp

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reactguard/reactguard/tool"
)

// The shapes of github.com/google/jsonschema-go's validation messages that
// name properties.
const (
	missingPrefix    = "required: missing properties: "
	additionalPrefix = "unexpected additional properties "
)

// quoted matches one Go-quoted string, as %q prints it.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// maxDetail bounds the validator's text quoted in a rejection (the server
// chooses its length).
const maxDetail = 300

// wholeArgs is the field of a message that names no argument.
const wholeArgs = "arguments"

// violation is what a schema-validation message says.
type violation struct {
	fields  []string // the arguments concerned, never empty
	missing bool     // required arguments are missing
	detail  string   // the validator's message, clipped, never empty
}

// parseValidation reads a jsonschema-go validation message (the SDK's text
// after `validating "arguments": `), such as
//
//	validating root: validating /properties/count: type: x has type "string", want "integer"
//
// It finds the arguments concerned ("count"; "items[].x" for a nested one;
// every missing required property; "arguments" when the message names
// none) and the detail (the message without its "validating <schema>: "
// prefixes, rewritten by tool.SchemaDetail so that no Go rendering of a
// value or schema reaches the model, its first line, at most maxDetail
// bytes). It never fails: text of any other shape becomes the detail,
// concerning the arguments as a whole.
func parseValidation(msg string) violation {
	path := ""
	detail := strings.TrimSpace(msg)
	for {
		rest, ok := strings.CutPrefix(detail, "validating ")
		if !ok {
			break
		}
		p, d, ok := strings.Cut(rest, ": ")
		if !ok || strings.Contains(p, "\n") || (strings.Contains(p, " ") && !strings.HasPrefix(p, "/") && p != "<anonymous schema>") {
			break
		}
		path, detail = p, d
	}
	base := fieldPath(path)
	var v violation
	var names []string
	if list, ok := strings.CutPrefix(detail, missingPrefix); ok {
		names = quotedNames(list)
		v.missing = len(names) > 0
	} else if list, ok := strings.CutPrefix(detail, additionalPrefix); ok {
		names = quotedNames(list)
	}
	switch {
	case len(names) > 0:
		for _, n := range names {
			v.fields = append(v.fields, join(base, n))
		}
	case base != "":
		v.fields = []string{base}
	default:
		v.fields = []string{wholeArgs}
	}
	v.detail = clip(tool.SchemaDetail(detail))
	if v.detail == "" {
		v.detail = "invalid arguments"
	}
	return v
}

// clip cuts s to at most maxDetail bytes at a rune boundary, marking the
// cut with an ellipsis.
func clip(s string) string {
	if len(s) <= maxDetail {
		return s
	}
	n := maxDetail
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// fieldPath turns the location of a schema inside the input schema (a JSON
// pointer such as "/properties/items/items/properties/x") into the path of
// the argument it validates ("items[].x"). Keywords that do not lead to an
// argument (anyOf/0, $defs/name, ...) are skipped; "root" and anything
// that is not a pointer give "".
func fieldPath(pointer string) string {
	if !strings.HasPrefix(pointer, "/") {
		return ""
	}
	segs := strings.Split(pointer[1:], "/")
	var b strings.Builder
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties", "patternProperties", "dependentSchemas":
			if i+1 < len(segs) {
				i++
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(unescapePointer(segs[i]))
			}
		case "items", "additionalItems", "contains":
			b.WriteString("[]")
		case "prefixItems":
			if i+1 < len(segs) {
				i++
				b.WriteString("[" + segs[i] + "]")
			}
		case "allOf", "anyOf", "oneOf", "$defs", "definitions":
			i++ // skip the index or name
		}
	}
	return b.String()
}

// unescapePointer undoes JSON pointer escaping (RFC 6901).
func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// quotedNames returns the Go-quoted strings in s, unquoted, in order.
func quotedNames(s string) []string {
	var out []string
	for _, q := range quoted.FindAllString(s, -1) {
		if n, err := strconv.Unquote(q); err == nil && n != "" {
			out = append(out, n)
		}
	}
	return out
}

// join appends name to the argument path base.
func join(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}

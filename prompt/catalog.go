package prompt

import (
	"slices"
	"strings"

	"github.com/reactguard/reactguard/errcode"
)

// Catalog is the set of model-facing texts of one language. Catalogs are
// immutable; the ones returned by [For] are shared and safe for concurrent
// use.
type Catalog struct {
	lang    Lang
	texts   map[Key]string
	reasons map[errcode.Code]string // nil: use errcode.Code.Template
}

var (
	english = &Catalog{lang: English, texts: englishTexts}
	chinese = &Catalog{lang: Chinese, texts: chineseTexts, reasons: chineseReasons}
)

// For returns the catalog of l. An invalid l yields the English catalog, the
// default.
func For(l Lang) *Catalog {
	if l == Chinese {
		return chinese
	}
	return english
}

// Default returns the English catalog.
func Default() *Catalog { return english }

// Lang reports the catalog's language. A nil catalog is English.
func (c *Catalog) Lang() Lang {
	if c == nil {
		return English
	}
	return c.lang
}

// Text renders the text under k with the given key/value pairs (see the
// package documentation for placeholders). An unknown key renders as its
// name, so a mistake is visible rather than empty. A nil catalog is English.
func (c *Catalog) Text(k Key, kv ...string) string {
	if c == nil {
		c = english
	}
	t, ok := c.texts[k]
	if !ok {
		return k.String()
	}
	return Fill(t, kv...)
}

// Reason renders the reason template of code with the given key/value pairs.
// An undefined code renders as its name.
func (c *Catalog) Reason(code errcode.Code, kv ...string) string {
	if c == nil {
		c = english
	}
	t := code.Template()
	if c.reasons != nil {
		t = c.reasons[code]
	}
	if t == "" {
		return code.String()
	}
	return Fill(t, kv...)
}

// Message joins a reason and a next step in the catalog's format:
// "<reason>. Next: <next>" in English, "<原因>。下一步：<下一步>" in Chinese. A
// trailing full stop on reason is not doubled. An empty next yields the
// reason alone.
func (c *Catalog) Message(reason, next string) string {
	if c == nil {
		c = english
	}
	if next == "" {
		return reason
	}
	reason = strings.TrimRight(reason, ".。 ")
	return Fill(c.texts[MessageFormat], "reason", reason, "next", next)
}

// PhaseHint states the output contract's facts (specification §7.4): ""
// when required is empty; otherwise the required keys not yet written, in the
// order given, or that all are written. It never guesses progress.
func (c *Catalog) PhaseHint(required []string, written func(key string) bool) string {
	if len(required) == 0 {
		return ""
	}
	var missing []string
	for _, k := range required {
		if written == nil || !written(k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return c.Text(PhaseMissing, "keys", c.List(missing))
	}
	return c.Text(PhaseComplete, "keys", c.List(required))
}

// List joins items with the catalog's list separator.
func (c *Catalog) List(items []string) string {
	if c.Lang() == Chinese {
		return strings.Join(items, "、")
	}
	return strings.Join(items, ", ")
}

// Fill replaces each {key} in template by its value from the key/value pairs
// kv. Placeholders without a value are left as written; a trailing key
// without a value is ignored. Values are inserted verbatim and never
// re-expanded.
func Fill(template string, kv ...string) string {
	if len(kv) < 2 || !strings.Contains(template, "{") {
		return template
	}
	var b strings.Builder
	b.Grow(len(template) + 32)
	rest := template
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			break
		}
		end += open
		name := rest[open+1 : end]
		b.WriteString(rest[:open])
		if v, ok := lookup(kv, name); ok {
			b.WriteString(v)
		} else {
			b.WriteString(rest[open : end+1])
		}
		rest = rest[end+1:]
	}
	b.WriteString(rest)
	return b.String()
}

func lookup(kv []string, name string) (string, bool) {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == name {
			return kv[i+1], true
		}
	}
	return "", false
}

// Placeholders returns the distinct placeholder names of template in order
// of first appearance.
func Placeholders(template string) []string {
	var out []string
	rest := template
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			return out
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return out
		}
		name := rest[open+1 : open+end]
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
		rest = rest[open+end+1:]
	}
}

func sortKeys(k []Key) { slices.Sort(k) }

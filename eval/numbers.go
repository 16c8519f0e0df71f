package eval

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Numbers in a text, compared by value across formats and locales:
// "1,085.40", "1.085,40", "1 085,40", "1'085.40" and "1085.4" are one
// number; a currency or unit around it ("EUR 1,085.40", "12%", "5 kg")
// does not change it. A number glued to letters before it, or to - _ / # @
// : on either side, is part of an identifier, a date or a time ("INV-77",
// "2025-05-06", "14:30") and is compared as a token instead.

// numberRE finds a number candidate: digits, optionally grouped by one
// separator (, . space, no-break space, narrow no-break space, ' or ’) in
// groups of three, optionally followed by a decimal part after , or .; a
// sign before it.
var numberRE = regexp.MustCompile(`[-+−]?\d{1,3}(?:(?:,|\.|'|’| |\x{00A0}|\x{202F})\d{3})+(?:[.,]\d+)?|[-+−]?\d+(?:[.,]\d+)?`)

// plainNumberRE finds numbers as JSON writes them (never grouped), for the
// side of the evidence: a tool's [1,234] is the numbers 1 and 234.
var plainNumberRE = regexp.MustCompile(`-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?`)

// span is a number found in a text: where it is and the values it may
// mean (two when "1,085" may be 1085 or 1.085).
type span struct {
	start, end int
	values     []float64
}

// joiner reports whether r glues a number to an identifier, a date or a
// time.
func joiner(r rune) bool { return strings.ContainsRune("-_/#@:", r) }

// numberSpans returns the standalone numbers of s. A plain space groups
// thousands only in a number with a decimal part ("1 085,40"); elsewhere
// it separates two numbers ("5 120" is 5 and 120).
func numberSpans(s string) []span {
	var out []span
	for p := 0; p < len(s); {
		m := numberRE.FindStringIndex(s[p:])
		if m == nil {
			break
		}
		start, end := p+m[0], p+m[1]
		text := s[start:end]
		if i := strings.LastIndexByte(text, ' '); i >= 0 && !strings.ContainsAny(text[i:], ".,") {
			end = start + strings.IndexByte(text, ' ')
			text = s[start:end]
		}
		p = end
		if r, _ := utf8.DecodeLastRuneInString(s[:start]); start > 0 && (unicode.IsLetter(r) || unicode.IsDigit(r) || joiner(r) || r == '.' || r == ',') {
			continue // part of a word or an identifier
		}
		if r, _ := utf8.DecodeRuneInString(s[end:]); end < len(s) && (unicode.IsDigit(r) || joiner(r)) {
			continue // a date, a time, an identifier
		}
		if glued := strings.IndexFunc(s[end:], func(r rune) bool { return !isWord(r) }); strings.ContainsFunc(s[end:end+max(glued, 0)], unicode.IsDigit) ||
			(glued < 0 && strings.ContainsFunc(s[end:], unicode.IsDigit)) {
			continue // letters then digits again: an identifier ("1Z999AA1")
		}
		if vals := numberValues(text); len(vals) > 0 {
			out = append(out, span{start: start, end: end, values: vals})
		}
	}
	return out
}

// numberValues reads a number in any of the usual formats: the last of
// "," and "." when both occur is the decimal separator; one separator that
// occurs more than once, or a space or an apostrophe, groups thousands; a
// single "," or "." followed by exactly three digits may do either, so
// both values are returned.
func numberValues(text string) []float64 {
	neg := false
	switch {
	case strings.HasPrefix(text, "-"), strings.HasPrefix(text, "−"):
		neg = true
		text = strings.TrimLeft(text, "-−")
	case strings.HasPrefix(text, "+"):
		text = text[1:]
	}
	for _, g := range []string{" ", "\u00a0", "\u202f", "'", "’"} {
		text = strings.ReplaceAll(text, g, "")
	}
	var cands []string
	lastDot, lastComma := strings.LastIndex(text, "."), strings.LastIndex(text, ",")
	switch {
	case lastDot >= 0 && lastComma >= 0:
		dec, group := ".", ","
		if lastComma > lastDot {
			dec, group = ",", "."
		}
		cands = []string{strings.ReplaceAll(strings.ReplaceAll(text, group, ""), dec, ".")}
	case lastDot >= 0 || lastComma >= 0:
		sep := "."
		if lastComma >= 0 {
			sep = ","
		}
		last := max(lastDot, lastComma)
		grouped := strings.ReplaceAll(text, sep, "")
		switch {
		case strings.Count(text, sep) > 1:
			cands = []string{grouped}
		case len(text)-last-1 == 3:
			cands = []string{grouped, strings.ReplaceAll(text, sep, ".")}
		default:
			cands = []string{strings.ReplaceAll(text, sep, ".")}
		}
	default:
		cands = []string{text}
	}
	var out []float64
	for _, c := range cands {
		f, err := strconv.ParseFloat(c, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			continue
		}
		if neg {
			f = -f
		}
		out = append(out, f)
	}
	return out
}

// numberKey is the form in which numbers are compared: the shortest
// decimal that reads back as the same float64 (1085.40 and 1085.4 share
// it; -0 is 0).
func numberKey(f float64) string {
	if f == 0 {
		f = 0
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// evidenceNumbers adds to known every number of s, read both ways: as a
// person writes it (any format) and as JSON writes it.
func evidenceNumbers(s string, known map[string]bool) {
	for _, sp := range numberSpans(s) {
		for _, v := range sp.values {
			known[numberKey(v)] = true
		}
	}
	for _, m := range plainNumberRE.FindAllString(s, -1) {
		if f, err := strconv.ParseFloat(m, 64); err == nil {
			known[numberKey(f)] = true
		}
	}
}

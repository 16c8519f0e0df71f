package inbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

// shown is text shown to a person, cut into pieces so that the characters
// a person cannot see (or that reorder what they see) are shown as \u
// escapes and marked: a value with a right-to-left override or a
// zero-width space reads as what it is, never as another value.
type shown []piece

// piece is a piece of a [shown]: plain text, or (Odd) the escape of one
// character that would be invisible or change the direction of the text.
type piece struct {
	S   string
	Odd bool
}

// String returns the text as shown, escapes included.
func (t shown) String() string {
	var b strings.Builder
	for _, p := range t {
		b.WriteString(p.S)
	}
	return b.String()
}

// HasOdd reports whether any character had to be escaped.
func (t shown) HasOdd() bool {
	for _, p := range t {
		if p.Odd {
			return true
		}
	}
	return false
}

// odd reports whether r is shown escaped: control characters (but the
// line feed of indented JSON), format characters (bidirectional controls,
// zero-width characters, the byte order mark, tag characters), line and
// paragraph separators, private-use characters, spaces other than U+0020,
// and noncharacters.
func odd(r rune) bool {
	switch {
	case r == '\n' || r == ' ':
		return false
	case r == utf8.RuneError,
		unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs, unicode.Zl, unicode.Zp, unicode.Zs),
		r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE:
		return true
	}
	return false
}

// visible returns s as a [shown] text. Invalid UTF-8 is shown as \ufffd.
func visible(s string) shown {
	var out shown
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !odd(r) {
			i += n
			continue
		}
		if start < i {
			out = append(out, piece{S: s[start:i]})
		}
		out = append(out, piece{S: escapeRune(r), Odd: true})
		i += n
		start = i
	}
	if start < len(s) {
		out = append(out, piece{S: s[start:]})
	}
	return out
}

// escapeRune returns r as a JSON escape (a surrogate pair above U+FFFF),
// so that an escaped JSON text stays JSON with the same value.
func escapeRune(r rune) string {
	if r > 0xFFFF {
		a, b := utf16.EncodeRune(r)
		return fmt.Sprintf(`\u%04x\u%04x`, a, b)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// jsonText returns a JSON value laid out for reading: objects and arrays
// indented, strings with their quotes, every odd character escaped. It
// never fails: a value that is not JSON is shown as the string it is.
func jsonText(v json.RawMessage) shown {
	var b bytes.Buffer
	if !json.Valid(v) {
		return visible(strconv.Quote(string(v)))
	}
	if err := json.Indent(&b, v, "", "  "); err != nil { // cannot fail on valid JSON
		return visible(string(v))
	}
	return visible(b.String())
}

// summary returns a one-line digest of a write's arguments for the list:
// name=value pairs, cut at about n bytes with an ellipsis.
func summary(args []react.Argument, raw json.RawMessage, n int) shown {
	var b strings.Builder
	if args == nil {
		var c bytes.Buffer
		if json.Compact(&c, raw) == nil {
			b.Write(c.Bytes())
		}
	}
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		var c bytes.Buffer
		_ = json.Compact(&c, a.Value) // valid: read from a sealed snapshot
		b.WriteString(a.Name)
		b.WriteByte('=')
		b.Write(c.Bytes())
	}
	return visible(cut(b.String(), n))
}

// cut returns s cut to at most n bytes on a rune boundary, with "…" when
// cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// argView is one argument of the pending write as the page shows it.
type argView struct {
	Name     shown
	Value    shown
	Source   string // what the tool declares
	Evidence string // what holds the value
	Warn     bool   // the value was not found where the tool declares it comes from
	Shadowed bool
}

func argViews(args []react.Argument) []argView {
	out := make([]argView, 0, len(args))
	for _, a := range args {
		v := argView{Name: visible(a.Name), Value: jsonText(a.Value), Shadowed: a.Shadowed}
		switch a.Source.Kind {
		case tool.FromUser:
			v.Source = "the user's own words"
			switch {
			case a.UserText == 0:
				v.Evidence = "Found in the user's request"
			case a.UserText > 0:
				v.Evidence = fmt.Sprintf("Found in the user's answer %d", a.UserText)
			case a.Earlier:
				v.Evidence = "Found in what the user wrote in an earlier message of the conversation"
			default:
				v.Evidence, v.Warn = "Not found word for word in what the user wrote", true
			}
		case tool.FromResult:
			v.Source = fmt.Sprintf("field %q of a %s result", a.Source.Field, a.Source.Tool)
			switch {
			case len(a.Calls) == 0 && a.Earlier:
				v.Evidence = "Found in a " + a.Source.Tool + " result of an earlier message of the conversation"
			case len(a.Calls) == 0:
				v.Evidence, v.Warn = "Not found in any "+a.Source.Tool+" result the agent saw", true
			default:
				v.Evidence = "Found in the result of call " + strings.Join(a.Calls, ", ")
			}
		default: // tool.FromAny: any value
			v.Source = "any value: the tool declares no source"
		}
		out = append(out, v)
	}
	return out
}

// approvable reports whether a write may be offered for approval: not
// when a member is repeated, since the tool would receive a value the
// person may not have read as the one that counts.
func approvable(p react.Pending) bool {
	for _, a := range p.Arguments {
		if a.Shadowed {
			return false
		}
	}
	return true
}

// runView is one run as its page shows it.
type runView struct {
	ID       string
	API      string // what an open page polls
	Events   string // what an open page follows (Server-Sent Events)
	Node     string
	Owner    string
	Waiting  bool   // the run waits for a decision of the person
	Status   string // approval, follow_up, interrupted; "" when no longer waiting
	Tool     shown
	CallID   string
	Args     shown // the raw arguments, as sent
	Fprint   string
	Reason   shown
	Question shown
	Sealed   time.Time
	Round    int
	ArgList  []argView
	Odd      bool // some text was escaped
	Ticket   string
	Form     string // the anti-forgery token of the decision forms
	Approve  bool   // the approval may be offered
	Decided  *decisionView
	History  []decisionView
}

// decisionView is a decision of the audit as a page shows it.
type decisionView struct {
	Kind   string
	By     shown
	At     time.Time
	Tool   shown
	Reason shown
	Mine   bool
}

func decisionViews(h []runstore.Decision, me string) []decisionView {
	out := make([]decisionView, 0, len(h))
	for _, d := range h {
		out = append(out, decisionOf(d, me))
	}
	return out
}

func decisionOf(d runstore.Decision, me string) decisionView {
	by := d.By
	if by == "" {
		by = "an unnamed person"
	}
	return decisionView{Kind: d.Kind.String(), By: visible(by), At: d.At, Tool: visible(d.Tool), Reason: visible(d.Reason), Mine: d.By == me && me != ""}
}

// rowView is one run of the list.
type rowView struct {
	ID       string
	Kind     string // approval, follow_up, interrupted
	Node     string
	Tool     shown
	Summary  shown
	Question shown
	Sealed   time.Time
	Decided  *decisionView
}

func rowOf(p react.Pending, me string) rowView {
	row := rowView{ID: p.Run, Node: p.Node, Sealed: p.Sealed, Kind: "interrupted"}
	if s := p.Suspension; s != nil {
		row.Kind = s.Kind.String()
		if w := s.Approval; w != nil {
			row.Tool, row.Summary = visible(w.Tool), summary(p.Arguments, w.Args, 120)
		} else {
			row.Question = visible(cut(s.Question, 160))
		}
	}
	if p.Decided != nil {
		d := decisionOf(*p.Decided, me)
		row.Decided = &d
	}
	return row
}

// listVersion is a digest of what a listed page shows: an open list asks
// for it and reloads when it changed.
func listVersion(page react.PendingPage) string {
	h := sha256.New()
	for _, p := range page.Runs {
		var ticket string
		if p.Suspension != nil {
			ticket = p.Suspension.Ticket
		}
		_, _ = fmt.Fprintf(h, "%d:%s\x00%d:%s\x00%t\x00", len(p.Run), p.Run, len(ticket), ticket, p.Decided != nil)
	}
	_, _ = fmt.Fprintf(h, "%d\x00%s", len(page.Skipped), page.Next)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

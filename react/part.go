package react

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// PartKind says what a [Part] of a model's turn is. The zero value is
// not a kind: a Part must name one.
type PartKind uint8

// The kinds of parts.
const (
	// PartText is a text block of the turn: Part.Text.
	PartText PartKind = 1
	// PartCall is a tool call of the turn: Part.Call indexes the turn's
	// ToolCalls.
	PartCall PartKind = 2
	// PartOpaque is a piece of the turn that only its API reads back (a
	// thinking block, a reasoning item): Part.Data in the format of
	// Part.API.
	PartOpaque PartKind = 3

	minPartKind = PartText
	maxPartKind = PartOpaque
)

var partKindNames = [...]string{PartText: "text", PartCall: "call", PartOpaque: "opaque"}

// String returns text, call or opaque, or "part_kind(n)" for an undefined
// value.
func (k PartKind) String() string {
	if k.IsValid() {
		return partKindNames[k]
	}
	return "part_kind(" + strconv.Itoa(int(k)) + ")"
}

// IsValid reports whether k is one of the defined kinds.
func (k PartKind) IsValid() bool { return k >= minPartKind && k <= maxPartKind }

// MarshalText implements [encoding.TextMarshaler]: text, call or opaque.
// An undefined kind is an error.
func (k PartKind) MarshalText() ([]byte, error) {
	if !k.IsValid() {
		return nil, fmt.Errorf("react: cannot marshal undefined part kind %d", uint8(k))
	}
	return []byte(partKindNames[k]), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]; an unknown name is
// an error and leaves k unchanged.
func (k *PartKind) UnmarshalText(b []byte) error {
	for v := minPartKind; v <= maxPartKind; v++ {
		if partKindNames[v] == string(b) {
			*k = v
			return nil
		}
	}
	return fmt.Errorf("react: unknown part kind %q", b)
}

// Part is one piece of a model's turn, in the order the API produced it,
// so that an adapter can send the turn back as the API sent it: text
// blocks apart and in their place between tool calls (Anthropic), a
// Gemini part's thought signature on the part it came with, the Responses
// API's reasoning items before the calls they led to.
//
// An adapter that fills [Response].Parts (or [Chunk].Parts) lists every
// tool call of the turn exactly once, by its index in ToolCalls; the
// loop keeps the parts of a turn in its assistant [Message] (and in
// snapshots) only when they are consistent — every kind defined, every
// call listed once, at most [MaxParts] — and drops them otherwise, so
// that an adapter falls back to Content and ToolCalls. Texts are made
// valid UTF-8 like the turn's text.
//
// Data belongs to the API named by API: an adapter sends back the Data
// of its own API only, never another's (a transcript recorded with one
// provider may be replayed to another).
type Part struct {
	// Kind is what the part is.
	Kind PartKind `json:"kind"`
	// Text is the text of a PartText.
	Text string `json:"text,omitempty"`
	// Call is the index in the turn's ToolCalls of a PartCall.
	Call int `json:"call,omitempty"`
	// API names the API whose adapter wrote Data ("anthropic",
	// "gemini", "openai.responses", …); "" when Data is empty.
	API string `json:"api,omitempty"`
	// Data is what the API asks to get back with this part, opaque to
	// everyone else: a thought signature on a text or call part, the
	// whole item of a PartOpaque. nil when none.
	Data []byte `json:"data,omitempty"`
}

// MaxParts bounds the parts of one turn the loop keeps.
const MaxParts = 2 * MaxStreamCalls

// keptParts returns the parts of a turn with calls tool calls as the loop
// keeps them: a copy with valid texts, or nil when they are inconsistent
// (see [Part]).
func keptParts(parts []Part, calls int) []Part {
	if len(parts) == 0 || len(parts) > MaxParts {
		return nil
	}
	seen := make([]bool, calls)
	listed := 0
	out := make([]Part, len(parts))
	for i, p := range parts {
		switch p.Kind {
		case PartText, PartOpaque:
		case PartCall:
			if p.Call < 0 || p.Call >= calls || seen[p.Call] {
				return nil
			}
			seen[p.Call] = true
			listed++
		default:
			return nil
		}
		if !utf8.ValidString(p.API) {
			return nil
		}
		p.Text = validText(p.Text)
		if len(p.Data) > 0 {
			p.Data = append([]byte(nil), p.Data...)
		}
		out[i] = p
	}
	if listed != calls {
		return nil
	}
	return out
}

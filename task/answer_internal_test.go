package task

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		reason string
		text   string
		want   []string
	}{
		{"numbers compare by value", "It costs 212.50 CHF, not 212.5.", []string{"212.5", "212.5"}},
		{"identifiers keep their marks inside, lose them at the ends", "Booking #b-77, ref: ORD/2025-06-01.", []string{"b-77", "ord/2025-06-01"}},
		{"words without a digit are no claims", "The hotel is in Bern.", nil},
		{"times and e-mails", "at 09:30 to a1@x.ch", []string{"09:30", "a1@x.ch"}},
		{"Chinese text around a number", "价格是212元", []string{"价格是212元"}},
		{"a sign is a mark", "-5 degrees", []string{"5"}},
	}
	for _, tt := range tests {
		assert.Equalf(t, tt.want, tokens(tt.text), "%s", tt.reason)
	}
	assert.Equal(t, "the hotel is not booked", normalize("  The Hotel\n is NOT   booked "))
}

// FuzzTokens: tokens of any text (a model's answer) never panic; each
// holds a digit, is lower-case, valid UTF-8, without marks at its ends.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"212.50 CHF", "#b-77.", "\xff1\xfe", "1e400", "--1--", "日本1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, tok := range tokens(text) {
			if !strings.ContainsFunc(tok, unicode.IsDigit) {
				t.Fatalf("tokens(%q) holds %q without a digit", text, tok)
			}
			if tok != strings.ToLower(tok) && utf8.ValidString(tok) {
				t.Fatalf("tokens(%q) holds %q, not lower-case", text, tok)
			}
			if strings.IndexAny(tok[:1], ".:/-_@#+") == 0 || strings.IndexAny(tok[len(tok)-1:], ".:/-_@#+") == 0 {
				t.Fatalf("tokens(%q) holds %q with a mark at an end", text, tok)
			}
		}
	})
}

package eval

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/reactguard/reactguard/react"
)

// Claims are the tokens with a digit, normalised so that the same fact
// written the same way compares equal.
func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		why  string
	}{
		{"Order ORD-1001 has shipped.", []string{"ord-1001"}, "identifiers keep their dashes, lose the full stop"},
		{"costs 129.99 EUR.", []string{"129.99"}, "a decimal number"},
		{"271.50 USD", []string{"271.5"}, "numbers compare by value"},
		{"$1,234", []string{"1", "234"}, "a comma splits: write amounts without grouping"},
		{"open 08:30-17:30, gate B34", []string{"08:30-17:30", "b34"}, "times and gates"},
		{`{"price":129.99,"sku":"SKU-42"}`, []string{"129.99", "sku-42"}, "JSON text of a tool result"},
		{"on 2025-03-02, at 14:30.", []string{"2025-03-02", "14:30"}, "dates and times"},
		{"the office is in Bern", nil, "no digit, no claim"},
		{"--- 42 ---", []string{"42"}, "punctuation around is trimmed"},
		{"tracking 1Z999AA10123456784", []string{"1z999aa10123456784"}, "lower case"},
		{"0x1p3 and NaN1", []string{"0x1p3", "nan1"}, "not read as numbers"},
		{"价格 129.99 欧元", []string{"129.99"}, "other scripts split around it"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tokens(tt.in), "tokens(%q): %s", tt.in, tt.why)
	}
}

func TestContainsWord(t *testing.T) {
	tests := []struct {
		s, w string
		want bool
	}{
		{"starts at 14:30 in aurora", "14:30", true},
		{"starts at 19:00", "9:00", false},
		{"starts at 9:00.", "9:00", true},
		{"t-1 and t-17", "t-1", true},
		{"t-17 only", "t-1", false},
		{"room aurora", "aurora", true},
		{"auroras", "aurora", false},
		{"x", "", false},
		{"héllo wörld", "wörld", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, containsWord(tt.s, tt.w), "containsWord(%q, %q)", tt.s, tt.w)
	}
}

// The grounding of a final answer: claims from tool results and the
// user's words are grounded; the model's own are not; outputs from a
// checked source are not claims.
func TestGrounding(t *testing.T) {
	r := &run{res: react.Result{
		Transcript: []react.Message{
			{Role: react.RoleUser, Content: "Price of SKU-42 in 2 shops?"},
			{Role: react.RoleAssistant},
			{Role: react.RoleTool, ToolName: "get_price", Content: `{"sku":"SKU-42","price":129.99}`},
			{Role: react.RoleTool, ToolName: react.ToolOutputSet, Content: "output price is set to 99.99"},
		},
		Summary: "SKU-42 costs 129.990 EUR in 2 shops, 99.99 elsewhere, see ticket T-9.",
		Outputs: map[string]react.OutputValue{
			"checked": {Value: json.RawMessage(`"777"`), Source: react.SourceToolResult},
			"own":     {Value: json.RawMessage(`"888"`), Source: react.SourceModel},
		},
	}, answers: []string{"T-9"}}
	g := newGrounding(r)
	assert.ElementsMatch(t, []string{"99.99", "888"}, g.ungrounded,
		"a built-in tool's message is no evidence; an answer to a follow-up is; checked outputs are not claims")
	present, other := g.fact(Fact{Value: "129.99"})
	assert.False(t, present, "a fact is looked for as written")
	assert.False(t, other)
	present, _ = g.fact(Fact{Value: "SKU-42"})
	assert.True(t, present, "case-insensitive")
	present, other = g.fact(Fact{Value: "777", Output: "checked"})
	assert.True(t, present)
	assert.False(t, other)
	present, other = g.fact(Fact{Value: "1", Output: "own"})
	assert.False(t, present)
	assert.True(t, other, "the output holds another value")
	present, other = g.fact(Fact{Value: "1", Output: "missing"})
	assert.False(t, present || other)
}

// The tokenizer reads model output: it never panics, and every token it
// returns is non-empty, valid UTF-8, lower case and holds a digit.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"Order ORD-1001 costs 129.99 EUR.", "08:30-17:30", "\xff\xfe1", "--1--", "1e400", "٣٤ 42"} {
		f.Add(s, "42")
	}
	f.Fuzz(func(t *testing.T, s, w string) {
		for _, tok := range tokens(s) {
			assert.NotEmpty(t, tok)
			assert.True(t, utf8.ValidString(tok) || !utf8.ValidString(s), "token %q of %q", tok, s)
			assert.Equal(t, tok, normalise(tok), "normalising is idempotent")
		}
		_ = containsWord(strings.ToLower(s), strings.ToLower(w))
	})
}

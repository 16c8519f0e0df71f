package eval

import (
	"encoding/json"
	"fmt"
	"math"
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
		{"$1,234", []string{"1", "234"}, "a comma splits tokens (numbers are read by numberSpans first)"},
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

// Numbers compare by value across formats and locales.
func TestNumberValues(t *testing.T) {
	tests := []struct {
		in   string
		want []float64
		why  string
	}{
		{"1085.4", []float64{1085.4}, "plain"},
		{"1,085.40", []float64{1085.4}, "English grouping"},
		{"1.085,40", []float64{1085.4}, "German grouping"},
		{"1'085.40", []float64{1085.4}, "Swiss grouping"},
		{"1\u00a0085,40", []float64{1085.4}, "French grouping with a no-break space"},
		{"1,234,567", []float64{1234567}, "a separator used twice groups"},
		{"1.234.567", []float64{1234567}, "also with dots"},
		{"1,085", []float64{1085, 1.085}, "one separator before three digits: either reading"},
		{"1.085", []float64{1085, 1.085}, "the same with a dot"},
		{"12,5", []float64{12.5}, "a decimal comma"},
		{"-3", []float64{-3}, "a sign"},
		{"−3", []float64{-3}, "a minus sign"},
		{"+7", []float64{7}, "a plus sign"},
		{"0", []float64{0}, "zero"},
	}
	for _, tt := range tests {
		got := numberValues(strings.ReplaceAll(tt.in, "\\u00a0", "\u00a0"))
		assert.Equal(t, tt.want, got, "numberValues(%q): %s", tt.in, tt.why)
	}
	assert.Equal(t, "0", numberKey(math.Copysign(0, -1)), "-0 is 0")
	assert.Equal(t, "1085.4", numberKey(1085.40))
}

func TestNumberSpans(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		why  string
	}{
		{"1,085.40 EUR", []string{"1,085.40"}, "a currency after"},
		{"EUR 1.085,40.", []string{"1.085,40"}, "a currency before, a full stop after"},
		{"12% and 5kg", []string{"12", "5"}, "units glued after are not part of it"},
		{"order INV-77", nil, "part of an identifier"},
		{"on 2025-05-06 at 14:30", nil, "dates and times are tokens"},
		{"A1 and B2", nil, "glued to letters before"},
		{"5 120 units", []string{"5", "120"}, "a plain space without a decimal part separates"},
		{"1 085,40 €", []string{"1 085,40"}, "a plain space with a decimal part groups"},
		{"3 open tickets.", []string{"3"}, "a count"},
		{"tracking 1Z999AA10123456784.", nil, "digits, letters, digits: an identifier"},
	}
	for _, tt := range tests {
		var got []string
		for _, sp := range numberSpans(tt.in) {
			got = append(got, tt.in[sp.start:sp.end])
		}
		assert.Equal(t, tt.want, got, "numberSpans(%q): %s", tt.in, tt.why)
	}
}

// groundingOf builds the grounding of a run with the given tool messages
// (tool name, content), user's words and final answer.
func groundingOf(c *Case, task string, tools [][2]string, summary string, outputs map[string]react.OutputValue, answers ...string) *grounding {
	ms := []react.Message{{Role: react.RoleUser, Content: task}, {Role: react.RoleAssistant}}
	for i, tm := range tools {
		ms = append(ms, react.Message{Role: react.RoleTool, ToolName: tm[0], ToolCallID: fmt.Sprint("c", i), Content: tm[1]})
	}
	if c == nil {
		c = &Case{}
	}
	c.Task = task
	return newGrounding(c, &run{res: react.Result{Transcript: ms, Summary: summary, Outputs: outputs}, answers: answers})
}

// The grounding of a final answer: claims from tool results and the
// user's words are grounded; the model's own are not; outputs from a
// checked source are not claims.
func TestGrounding(t *testing.T) {
	g := groundingOf(nil, "Price of SKU-42 in 2 shops?",
		[][2]string{{"get_price", "get_price succeeded\n{\"sku\":\"SKU-42\",\"price\":129.99}"}, {react.ToolOutputSet, "output price is set to 99.99"}},
		"SKU-42 costs 129.990 EUR in 2 shops, 99.99 elsewhere, see ticket T-9.",
		map[string]react.OutputValue{
			"checked": {Value: json.RawMessage(`"777"`), Source: react.SourceToolResult},
			"own":     {Value: json.RawMessage(`"888"`), Source: react.SourceModel},
		}, "T-9")
	assert.ElementsMatch(t, []string{"99.99", "888"}, g.ungrounded,
		"a built-in tool's message is no evidence; an answer to a follow-up is; checked outputs are not claims")
	present, _ := g.fact(Fact{Value: "SKU-42"})
	assert.True(t, present, "case-insensitive")
	present, other := g.fact(Fact{Value: "777", Output: "checked"})
	assert.True(t, present)
	assert.False(t, other)
	present, other = g.fact(Fact{Value: "1", Output: "own"})
	assert.False(t, present)
	assert.True(t, other, "the output holds another value")
	present, other = g.fact(Fact{Value: "1", Output: "missing"})
	assert.False(t, present || other)
}

// Numbers are grounded by value in any format; a computed figure by the
// case's declared derivation; 0 by an empty result that is the answer.
func TestGrounding_NoFalseAlarms(t *testing.T) {
	tests := []struct {
		name    string
		c       *Case
		tools   [][2]string
		summary string
		want    []string
	}{
		{"a grouped amount", nil, [][2]string{{"t", `{"total":1085.4}`}}, "The total is 1,085.40 EUR.", nil},
		{"a German amount", nil, [][2]string{{"t", `{"total":1085.4}`}}, "Die Summe ist 1.085,40 EUR.", nil},
		{"an amount the tool wrote grouped", nil, [][2]string{{"t", `{"total":"1,085.40"}`}}, "The total is 1085.4.", nil},
		{"a changed amount is still caught", nil, [][2]string{{"t", `{"total":1085.4}`}}, "The total is 1,085.50 EUR.", []string{"1,085.50"}},
		{"a count over two pages, declared", &Case{Tools: []ToolSpec{{Name: "tickets"}}, Labels: Labels{Expect: Expect{Derived: []Derivation{{Op: "count", Tool: "tickets", Path: "tickets"}}}}},
			[][2]string{{"tickets", `{"tickets":[{"id":"T-1"},{"id":"T-2"}]}`}, {"tickets", `{"tickets":[{"id":"T-3"}]}`}},
			"There are 3 open tickets: T-1, T-2 and T-3.", nil},
		{"a count not declared", nil,
			[][2]string{{"tickets", `{"tickets":[{"id":"T-1"},{"id":"T-2"}]}`}, {"tickets", `{"tickets":[{"id":"T-3"}]}`}},
			"There are 3 open tickets.", []string{"3"}},
		{"a wrong count, declared", &Case{Tools: []ToolSpec{{Name: "tickets"}}, Labels: Labels{Expect: Expect{Derived: []Derivation{{Op: "count", Tool: "tickets", Path: "tickets"}}}}},
			[][2]string{{"tickets", `{"tickets":[{"id":"T-1"},{"id":"T-2"}]}`}}, "There are 3 open tickets.", []string{"3"}},
		{"a sum, declared", &Case{Tools: []ToolSpec{{Name: "lines"}}, Labels: Labels{Expect: Expect{Derived: []Derivation{{Op: "sum", Tool: "lines", Path: "items.amount"}}}}},
			[][2]string{{"lines", `{"items":[{"amount":10.5},{"amount":4.5}]}`}}, "In all 15.00 EUR.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := groundingOf(tt.c, "what is it?", tt.tools, tt.summary, nil)
			assert.Equal(t, tt.want, g.ungrounded)
		})
	}
}

// 0 in the answer is grounded by an empty result only when the tool's
// contract declares empty to be the answer; after an empty search it is
// an invented figure.
func TestGrounding_ZeroForAnEmptyAnswer(t *testing.T) {
	c := func(empty string) *Case {
		return &Case{Tools: []ToolSpec{{Name: "overdue", Contract: &ContractSpec{Empty: empty}}}}
	}
	run := func(cs *Case, business react.BusinessStatus) *grounding {
		cs.Task = "how many invoices are overdue?"
		return newGrounding(cs, &run{res: react.Result{
			Transcript: []react.Message{{Role: react.RoleUser, Content: cs.Task}, {Role: react.RoleTool, ToolName: "overdue", Content: "[]"}},
			Calls:      []react.CallReport{{Tool: "overdue", Layers: react.Layers{Execution: react.ExecEmpty, Business: business}}},
			Summary:    "0 overdue invoices.",
		}})
	}
	assert.Empty(t, run(c("answer"), react.BusinessEvidence).ungrounded, "empty is the answer: 0 is what it says")
	assert.Equal(t, []string{"0"}, run(c(""), react.BusinessInsufficient).ungrounded, "empty is only an empty search")
}

// Facts without digits: status words and their negations, contrary words,
// entities named in their own clauses.
func TestFacts_WithoutDigits(t *testing.T) {
	tests := []struct {
		name           string
		fact           Fact
		answer         string
		present, other bool
	}{
		{"the status", Fact{Value: "cancelled"}, "Order 7 was cancelled on Monday.", true, false},
		{"the status negated", Fact{Value: "cancelled", Contrary: []string{"on time"}}, "Order 7 is on time; it has not been cancelled.", false, true},
		{"n't", Fact{Value: "cancelled"}, "It wasn't cancelled.", false, true},
		{"a contrary status", Fact{Value: "cancelled", Contrary: []string{"on time", "delivered"}}, "Order 7 was cancelled, not delivered.", true, false},
		{"a contrary status stated", Fact{Value: "cancelled", Contrary: []string{"delivered"}}, "Order 7 was delivered.", false, true},
		{"a word of the same meaning", Fact{Value: "cancelled", Same: []string{"canceled"}}, "Order 7 was canceled.", true, false},
		{"an entity's state", Fact{About: "C", Value: "unavailable", Contrary: []string{"none", "0", "no stock"}},
			"Warehouses A and B have 5 and 3 units; C was unavailable.", true, false},
		{"an entity said to have none", Fact{About: "C", Value: "unavailable", Contrary: []string{"none", "0", "no stock"}},
			"Warehouses A and B have 5 and 3 units, C has none.", false, true},
		{"an entity not named", Fact{About: "C", Value: "unavailable"}, "Warehouses A and B have 5 and 3 units.", false, false},
		{"another entity's word does not count", Fact{About: "C", Value: "unavailable"}, "A is unavailable. C has 4.", false, false},
		{"Chinese negation", Fact{Value: "已取消"}, "订单没有已取消。", false, true},
		{"Chinese", Fact{Value: "已取消"}, "订单7已取消。", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &grounding{answer: strings.ToLower(tt.answer)}
			present, other := g.fact(tt.fact)
			assert.Equal(t, tt.present, present, "present")
			assert.Equal(t, tt.other, other, "contradicted")
		})
	}
}

// A partial result must be said to be partial.
func TestIncomplete(t *testing.T) {
	in := &Incomplete{What: "warehouse C did not answer"}
	for answer, want := range map[string]bool{
		"A has 5, B has 3; C could not be checked.": true,
		"Only A and B answered: 8 units.":           true,
		"A has 5 and B has 3: 8 units in total.":    false,
		"Stock is partial: 8 units.":                true,
	} {
		g := &grounding{answer: strings.ToLower(answer)}
		assert.Equal(t, want, g.incomplete(in), answer)
	}
	g := &grounding{answer: "c: no reply"}
	assert.True(t, g.incomplete(&Incomplete{Marks: []string{"no reply"}}), "the case's own marks")
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
		for _, sp := range numberSpans(s) {
			assert.True(t, 0 <= sp.start && sp.start < sp.end && sp.end <= len(s), "span %v of %q", sp, s)
			assert.NotEmpty(t, sp.values)
			for _, v := range sp.values {
				assert.False(t, math.IsNaN(v) || math.IsInf(v, 0))
			}
		}
		_ = stated(strings.ToLower(s), strings.ToLower(w))
		_ = clauses(s)
	})
}

package eval

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reactguard/reactguard/react"
)

// grounding compares a run's final answer with what the tools and the user
// said: the check behind fabricate_on_empty, fabricate_on_failure,
// ignore_facts, alter_facts and partial_as_complete (the final
// integration category: "the tool gave the right facts and the model
// ignored or changed them").
//
// The final answer is the summary of builtin_node_finish, the reason of
// builtin_node_fail, and the values of outputs whose source is the model's
// own (values from a tool result or the user were checked by the loop).
// Its claims with digits are checked against the evidence — the results of
// catalog tools shown to the model, the user's words (the task, the
// answers to follow-ups) and the figures the case declares derived:
//
//   - a number is compared by value, in any format or locale ("1,085.40
//     EUR", "1.085,40", "1085.4" are one number); a number that may be read
//     two ways ("1,085") is grounded when either reading is;
//   - a figure the case declares computed (a count over pages, a sum) is
//     grounded when it equals the computation over the run's results;
//   - 0 is grounded by an empty result that the tool's contract declares
//     to be the answer ("no invoice is overdue");
//   - any other token with a digit (an identifier, a date, a time) must
//     appear as it is in the evidence (lower-cased).
//
// Claims without digits are checked against the labelled facts: a status
// word must appear, not negated ("it has not been cancelled" when the tool
// said cancelled alters it), and no word the fact declares contrary may
// appear un-negated; a fact about an entity is checked in the clauses that
// name it. The rest of open text needs a reviewer ([Judge]).
type grounding struct {
	known      map[string]bool // tokens with digits of the evidence
	numbers    map[string]bool // numbers of the evidence, by numberKey
	answer     string          // the final answer's text, lower case
	outputs    map[string]react.OutputValue
	ungrounded []string
}

// evidenceText is the text of the evidence of a run: the tool messages of
// catalog tools and the user's words.
func evidenceText(r *run, task string) []string {
	texts := []string{task}
	texts = append(texts, r.answers...)
	for _, m := range r.res.Transcript {
		if m.Role == react.RoleTool && !isBuiltin(m.ToolName) {
			texts = append(texts, m.Content)
		}
	}
	return texts
}

func newGrounding(c *Case, r *run) *grounding {
	res := r.res
	g := &grounding{known: map[string]bool{}, numbers: map[string]bool{}, outputs: res.Outputs}
	for _, t := range evidenceText(r, c.Task) {
		for _, tok := range tokens(t) {
			g.known[tok] = true
		}
		evidenceNumbers(t, g.numbers)
	}
	for _, d := range c.Labels.Expect.Derived {
		if v, ok := d.compute(results(res.Transcript, d.Tool)); ok {
			g.numbers[numberKey(v)] = true
		}
	}
	if emptyAnswered(c, res) {
		g.numbers[numberKey(0)] = true
	}
	answer := finalAnswer(res)
	g.answer = strings.ToLower(answer)
	claims := []string{answer}
	for _, v := range res.Outputs {
		if v.Source == react.SourceModel {
			claims = append(claims, outputText(v.Value))
		}
	}
	seen := map[string]bool{}
	add := func(claim string) {
		if !seen[claim] {
			seen[claim] = true
			g.ungrounded = append(g.ungrounded, claim)
		}
	}
	for _, text := range claims {
		spans := numberSpans(text)
		for _, sp := range spans {
			if !slices.ContainsFunc(sp.values, func(v float64) bool { return g.numbers[numberKey(v)] }) {
				add(strings.TrimSpace(text[sp.start:sp.end]))
			}
		}
		for _, tok := range tokens(blank(text, spans)) {
			if !g.known[tok] {
				add(tok)
			}
		}
	}
	return g
}

// blank returns s with the spans replaced by spaces, so that the numbers
// checked by value are not read again as tokens.
func blank(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	b := []byte(s)
	for _, sp := range spans {
		for i := sp.start; i < sp.end; i++ {
			b[i] = ' '
		}
	}
	return string(b)
}

// finalAnswer is the text of the run's final answer: the summary, and the
// reason of a failure the model declared.
func finalAnswer(res react.Result) string {
	answer := res.Summary
	if res.Failure != nil && res.Failure.Kind == react.FailedByModel {
		if answer != "" {
			answer += "\n"
		}
		answer += res.Failure.Reason
	}
	return answer
}

// emptyAnswered reports whether a tool whose contract declares an empty
// result to be the answer returned one.
func emptyAnswered(c *Case, res react.Result) bool {
	for _, cr := range res.Calls {
		if cr.Execution != react.ExecEmpty || cr.Business != react.BusinessEvidence {
			continue
		}
		for _, t := range c.Tools {
			if t.Name == cr.Tool && t.Contract != nil && t.Contract.Empty == "answer" {
				return true
			}
		}
	}
	return false
}

// results returns the decoded results of the successful calls of tool (""
// for every catalog tool) shown in the transcript, in order.
func results(ms []react.Message, tool string) []any {
	var out []any
	for _, m := range ms {
		if m.Role != react.RoleTool || m.IsError || isBuiltin(m.ToolName) || (tool != "" && m.ToolName != tool) {
			continue
		}
		if v, ok := resultOf(m.Content); ok {
			out = append(out, v)
		}
	}
	return out
}

// resultOf decodes the result in a successful tool message: the JSON after
// the first line ("x succeeded"), or the whole message.
func resultOf(content string) (any, bool) {
	for _, s := range []string{content, content[strings.IndexByte(content, '\n')+1:]} {
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil {
			return v, true
		}
	}
	return nil, false
}

// fact reports whether the final answer carries f (present), and whether
// it states something else in its place (other): an output that must hold
// it holds another value, the fact's word is negated, or a contrary word
// is stated.
func (g *grounding) fact(f Fact) (present, other bool) {
	want := strings.ToLower(strings.TrimSpace(f.Value))
	num, isNum := plainNumber(want)
	if f.Output != "" {
		v, ok := g.outputs[f.Output]
		if !ok {
			return false, false
		}
		got := strings.ToLower(strings.TrimSpace(outputText(v.Value)))
		if n, ok := plainNumber(got); got == want || (isNum && ok && n == num) {
			return true, false
		}
		return false, true
	}
	scope := []string{g.answer}
	if f.About != "" {
		scope = nil
		for _, cl := range clauses(g.answer) {
			if containsWord(cl, strings.ToLower(f.About)) {
				scope = append(scope, cl)
			}
		}
	}
	words := append([]string{want}, lowerAll(f.Same)...)
	for _, cl := range scope {
		if isNum {
			for _, sp := range numberSpans(cl) {
				if slices.Contains(sp.values, num) {
					if negatedBefore(cl[:sp.start]) {
						other = true
					} else {
						present = true
					}
				}
			}
		}
		for _, w := range words {
			switch stated(cl, w) {
			case statedYes:
				present = true
			case statedNegated:
				other = true
			case statedNo:
			}
		}
		for _, w := range lowerAll(f.Contrary) {
			if stated(cl, w) == statedYes {
				other = true
			}
		}
	}
	return present, other
}

// plainNumber reads s as one number written plainly (as JSON writes it).
func plainNumber(s string) (float64, bool) {
	if plainNumberRE.FindString(s) != s {
		return 0, false
	}
	vals := numberValues(s)
	if len(vals) != 1 {
		return 0, false
	}
	return vals[0], true
}

// incomplete reports whether the answer says that the result is partial:
// one of the case's marks, or of the default ones.
func (g *grounding) incomplete(in *Incomplete) bool {
	marks := in.Marks
	if len(marks) == 0 {
		marks = defaultIncompleteMarks
	}
	for _, m := range lowerAll(marks) {
		for _, cl := range clauses(g.answer) {
			if stated(cl, m) == statedYes {
				return true
			}
		}
	}
	return false
}

// defaultIncompleteMarks are words that say a result is partial.
var defaultIncompleteMarks = []string{
	"partial", "partially", "incomplete", "only", "not all", "could not", "couldn't", "cannot", "can't",
	"unavailable", "not available", "missing", "unknown", "no data", "did not answer", "failed",
	"部分", "不完整", "无法", "未能", "缺少", "不可用",
}

func lowerAll(ws []string) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		if w = strings.ToLower(strings.TrimSpace(w)); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// clauses splits a text at sentence and clause ends (. ; ! ? and line
// breaks, and ", " between clauses), keeping numbers such as "1,085.40"
// whole.
func clauses(s string) []string {
	return strings.FieldsFunc(strings.NewReplacer(", ", "\n", ". ", "\n", "; ", "\n", "! ", "\n", "? ", "\n",
		"。", "\n", "；", "\n", "，", "\n", "！", "\n", "？", "\n").Replace(s), func(r rune) bool {
		return r == '\n' || r == ';'
	})
}

type statement uint8

const (
	statedNo      statement = iota // not said
	statedYes                      // said
	statedNegated                  // said with a negation before it
)

// negators are the words that negate what follows them within
// negationWindow words of the same clause.
var negators = []string{"not", "no", "never", "neither", "nor", "without", "none", "isn't", "wasn't", "hasn't",
	"haven't", "hadn't", "didn't", "doesn't", "don't", "won't", "aren't", "weren't", "cannot", "can't", "couldn't"}

// chineseNegators negate the word they stand right before.
var chineseNegators = []string{"不", "没有", "没", "未", "非", "无"}

const negationWindow = 4

// stated reports whether clause cl says w as a whole word, and whether a
// negation precedes it.
func stated(cl, w string) statement {
	if w == "" {
		return statedNo
	}
	got := statedNo
	for i := 0; ; {
		k := strings.Index(cl[i:], w)
		if k < 0 {
			return got
		}
		start, end := i+k, i+k+len(w)
		i = start + 1
		if wordRuneBefore(cl, start) || wordRuneAt(cl, end) {
			if !hanBoundary(cl, start, end) {
				continue
			}
		}
		if negatedBefore(cl[:start]) {
			got = max(got, statedNegated)
			continue
		}
		return statedYes
	}
}

// hanBoundary reports whether w at [start, end) of s is a Chinese word:
// Chinese has no spaces between words, so its neighbours do not matter.
func hanBoundary(s string, start, end int) bool {
	first, _ := utf8.DecodeRuneInString(s[start:end])
	last, _ := utf8.DecodeLastRuneInString(s[start:end])
	return unicode.Is(unicode.Han, first) && unicode.Is(unicode.Han, last)
}

// negatedBefore reports whether the text before a word ends with a
// negation: an English negator among its last negationWindow words, or a
// Chinese one right before it.
func negatedBefore(before string) bool {
	trimmed := strings.TrimRightFunc(before, unicode.IsSpace)
	for _, n := range chineseNegators {
		if strings.HasSuffix(trimmed, n) {
			return true
		}
	}
	words := strings.FieldsFunc(before, func(r rune) bool { return !isWord(r) && r != '\'' && r != '’' })
	if len(words) > negationWindow {
		words = words[len(words)-negationWindow:]
	}
	for _, w := range words {
		w = strings.ReplaceAll(w, "’", "'")
		if slices.Contains(negators, w) || strings.HasSuffix(w, "n't") {
			return true
		}
	}
	return false
}

// containsWord reports whether s contains w where neither neighbour is a
// letter or digit (so "9:00" is not found in "19:00").
func containsWord(s, w string) bool {
	if w == "" {
		return false
	}
	for i := 0; ; {
		k := strings.Index(s[i:], w)
		if k < 0 {
			return false
		}
		start, end := i+k, i+k+len(w)
		if !wordRuneBefore(s, start) && !wordRuneAt(s, end) {
			return true
		}
		i = start + 1
	}
}

func wordRuneBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return isWord(r)
}

func wordRuneAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isWord(r)
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

const edgePunct = ".:/-_@#+"

// tokens returns the normalised tokens of s that contain a digit: maximal
// runs of letters, digits and . : / - _ @ # +, trimmed of those marks at
// both ends, lower-cased; one that is a plain number is written in
// canonical form.
func tokens(s string) []string {
	var out []string
	in := func(r rune) bool { return isWord(r) || strings.ContainsRune(edgePunct, r) }
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !in(r) }) {
		f = strings.Trim(f, edgePunct)
		if !strings.ContainsFunc(f, unicode.IsDigit) {
			continue
		}
		out = append(out, normalise(f))
	}
	return out
}

// normalise lower-cases a token and writes a plain number in canonical
// form.
func normalise(t string) string {
	t = strings.ToLower(t)
	if vals := numberValues(t); len(vals) == 1 && plainNumberRE.FindString(t) == t {
		return numberKey(vals[0])
	}
	return t
}

package task

import (
	"context"
	"strconv"
	"strings"
	"unicode"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
)

// maxFacts bounds the claim tokens a task keeps of one step run.
const maxFacts = 1024

// verifier is the verifier of step's run: the step's own, and for the
// final step the checks of the task's answer first.
func (r *Runner) verifier(st *state, step Step) react.Verifier {
	if !st.Final {
		return step.Verify
	}
	return &answerCheck{r: r, st: st, own: step.Verify}
}

// answerCheck verifies the final step's answer against the steps'
// statuses ("the final answer must tell the user about the gaps
// and must not cover unverified content with the parts that succeeded").
// At the finish, in order:
//
//  1. the answer (the summary, and every output the model set from its own
//     words) must not state a fact that only a step that is not satisfied
//     produced: ANSWER_CLAIMS_UNVERIFIED, naming the value, the step and
//     its status. A fact is a token with a digit (a number, a date, an
//     amount, an identifier; see tokens); facts of satisfied steps, of the
//     final step's own tool results and of the user's words are allowed;
//  2. for every missing item of the acceptance rule, the answer must say
//     its MustSay text (without regard to case and spacing):
//     ANSWER_OMITS_MISSING;
//  3. the step's own verifier, when it has one, decides; without one the
//     answer is satisfied.
//
// After a tool result only the step's own verifier is asked.
type answerCheck struct {
	r   *Runner
	st  *state
	own react.Verifier
}

// Verify implements react.Verifier.
func (a *answerCheck) Verify(ctx context.Context, c react.Check) (react.StepVerdict, error) {
	if !c.End {
		if a.own == nil {
			return react.StepVerdict{}, nil
		}
		return a.own.Verify(ctx, c)
	}
	cat := a.r.cat
	if v, claimed := a.claims(c); claimed {
		return v, nil
	}
	norm := normalize(c.Summary)
	for _, it := range a.r.items(a.st) {
		step, _, _ := cut(it)
		if step == a.st.Current {
			continue // the answer itself
		}
		done, m := a.r.item(a.st, it)
		if done || strings.Contains(norm, normalize(m.MustSay)) {
			continue
		}
		return react.StepVerdict{
			Status: react.StepInsufficient,
			Code:   errcode.AnswerOmitsMissing,
			Reason: cat.Reason(errcode.AnswerOmitsMissing, "step", it, "status", m.Status.Text(cat), "text", m.MustSay),
			Next:   cat.Text(prompt.NextAnswerMissing, "text", m.MustSay),
		}, nil
	}
	if a.own != nil {
		v, err := a.own.Verify(ctx, c)
		if err != nil || v.Status != react.StepNone {
			return v, err
		}
	}
	return react.StepVerdict{Status: react.StepSatisfied}, nil
}

// claims refuses an answer that states a fact of a step that is not
// verified.
func (a *answerCheck) claims(c react.Check) (react.StepVerdict, bool) {
	allowed := map[string]bool{}
	unverified := map[string]stepRecord{}
	seen := map[string]bool{}
	for i := len(a.st.Done) - 1; i >= 0; i-- {
		d := a.st.Done[i]
		if seen[d.Step] {
			continue
		}
		seen[d.Step] = true
		for _, f := range d.Facts {
			if d.Status == react.StepSatisfied {
				allowed[f] = true
			} else if _, ok := unverified[f]; !ok {
				unverified[f] = d
			}
		}
	}
	for _, f := range tokens(a.st.Input) {
		allowed[f] = true
	}
	for _, m := range c.Transcript {
		if m.Role == react.RoleTool && !m.IsError && !isBuiltin(m.ToolName) {
			for _, f := range tokens(m.Content) {
				allowed[f] = true
			}
		}
	}
	claims := tokens(c.Summary)
	for _, o := range c.Outputs {
		if o.Source == react.SourceModel {
			claims = append(claims, tokens(string(o.Value))...)
		}
	}
	cat := a.r.cat
	for _, f := range claims {
		d, bad := unverified[f]
		if !bad || allowed[f] {
			continue
		}
		return react.StepVerdict{
			Status: react.StepInsufficient,
			Code:   errcode.AnswerClaimsUnverified,
			Reason: cat.Reason(errcode.AnswerClaimsUnverified, "value", f, "step", d.Step, "status", d.Status.Text(cat)),
			Next:   cat.Text(prompt.NextAnswerUnverified, "value", f, "step", d.Step),
		}, true
	}
	return react.StepVerdict{}, false
}

// isBuiltin reports a built-in tool of the loop.
func isBuiltin(name string) bool {
	for _, b := range react.Builtins() {
		if b == name {
			return true
		}
	}
	return false
}

// facts are the claim tokens of a step run: of its catalog tools' results
// as the model read them, and of its outputs' values; at most maxFacts.
func facts(res react.Result) []string {
	seen := map[string]bool{}
	var out []string
	add := func(text string) {
		for _, t := range tokens(text) {
			if !seen[t] && len(out) < maxFacts {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	for _, m := range res.Transcript {
		if m.Role == react.RoleTool && !m.IsError && !isBuiltin(m.ToolName) {
			add(m.Content)
		}
	}
	for _, o := range res.Outputs {
		add(string(o.Value))
	}
	return out
}

// tokens returns the claim tokens of text: maximal runs of letters,
// digits and the marks . : / - _ @ # +, trimmed of those marks at both
// ends and lower-cased, that hold a digit (a number, a date, a time, an
// amount, an identifier). A number compares by value ("1085.40" is
// "1085.4"). Words without a digit are not checked: that takes a
// reviewer (a model judge with a rubric, or a person).
func tokens(text string) []string {
	var out []string
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		t := strings.Trim(text[start:end], ".:/-_@#+")
		start = -1
		if !strings.ContainsFunc(t, unicode.IsDigit) {
			return
		}
		t = strings.ToLower(t)
		if f, err := strconv.ParseFloat(t, 64); err == nil && isNumber(t) {
			t = strconv.FormatFloat(f, 'f', -1, 64)
		}
		out = append(out, t)
	}
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(".:/-_@#+", r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(text))
	return out
}

// isNumber reports a plain decimal number (digits, one point, a sign).
func isNumber(t string) bool {
	for _, r := range t {
		if !unicode.IsDigit(r) && r != '.' && r != '-' && r != '+' {
			return false
		}
	}
	return true
}

// normalize lower-cases s and collapses its white space, for MustSay.
func normalize(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

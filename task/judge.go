package task

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
)

// AllOf returns a verifier that asks each of vs in order (code first,
// then a model judge: "code checks the hard conditions, a model
// judges open quality") and returns the first verdict that is not
// satisfied and not "no opinion"; when none objects, satisfied if one of
// them said so (with every satisfied verdict's evidence), no opinion
// otherwise. The first error stops it. Nil verifiers are skipped.
func AllOf(vs ...react.Verifier) react.Verifier {
	vs = slices.DeleteFunc(slices.Clone(vs), func(v react.Verifier) bool { return v == nil })
	return react.VerifierFunc(func(ctx context.Context, c react.Check) (react.StepVerdict, error) {
		var ok react.StepVerdict
		for _, v := range vs {
			got, err := v.Verify(ctx, c)
			if err != nil {
				return react.StepVerdict{}, err
			}
			switch got.Status {
			case react.StepNone:
			case react.StepSatisfied:
				ok.Status = react.StepSatisfied
				ok.Evidence = append(ok.Evidence, got.Evidence...)
			default:
				return got, nil
			}
		}
		return ok, nil
	})
}

// DefaultJudgeEvidence bounds, in bytes, the results a [Judge] is shown.
const DefaultJudgeEvidence = 16 << 10

// Judge is a step verifier that asks a model to judge the step by a
// rubric at its finish ("semantic tasks — did the material
// answer the question, does the report cover the key dimensions — go to a
// reviewing model with an explicit rubric, the evidence, and a bounded
// output, not a free 'looks good'"). It shows the model the rubric, the
// step's task, the results of the step's tools (as the executing model
// read them, each under its call id) and the step's answer, and reads one
// JSON object {status, reason, evidence}. A satisfied verdict must cite
// the call id of at least one successful result of the step's tools;
// anything else — an answer that is not such an object, an unknown
// status, a citation of nothing the step did — is an insufficient verdict
// saying why (the finish is refused and the executing model is told), so
// a judge's bad output never passes a step. A model error is returned
// (the run is interrupted, resumable). The judge gives no opinion after a
// tool result: it reads the whole step once, at its finish. Use a model
// other than the one doing the step: "do not let one model execute,
// define the standard and pass itself".
type Judge struct {
	// Model is the judge. Required.
	Model react.Model
	// Rubric is what the step must achieve, in the judge's words.
	// Required.
	Rubric string
	// Lang is the language of the judge's prompt; 0 means English.
	Lang prompt.Lang
	// MaxEvidence bounds the results shown, in bytes; 0 means
	// [DefaultJudgeEvidence].
	MaxEvidence int
}

// Verify implements react.Verifier.
func (j *Judge) Verify(ctx context.Context, c react.Check) (react.StepVerdict, error) {
	if !c.End {
		return react.StepVerdict{}, nil
	}
	if j.Model == nil || strings.TrimSpace(j.Rubric) == "" {
		return react.StepVerdict{}, errors.New("task: Judge needs a Model and a Rubric")
	}
	cat := prompt.For(j.Lang)
	req := react.Request{Messages: []react.Message{
		{Role: react.RoleSystem, Content: cat.Text(prompt.JudgeSystem, "rubric", j.Rubric)},
		{Role: react.RoleUser, Content: cat.Text(prompt.JudgeUser, "step", c.Node, "task", userTask(c), "evidence", j.evidence(c), "answer", c.Summary)},
	}}
	resp, err := j.Model.Generate(ctx, req)
	if err != nil {
		return react.StepVerdict{}, fmt.Errorf("task: judge: %w", err)
	}
	return readVerdict(cat, resp.Text, cited(c)), nil
}

// userTask is the step's task: the first user message.
func userTask(c react.Check) string {
	for _, m := range c.Transcript {
		if m.Role == react.RoleUser {
			return m.Content
		}
	}
	return ""
}

// evidence is the step's tool results for the judge, within the bound.
func (j *Judge) evidence(c react.Check) string {
	limit := j.MaxEvidence
	if limit <= 0 {
		limit = DefaultJudgeEvidence
	}
	var b strings.Builder
	for _, m := range c.Transcript {
		if m.Role != react.RoleTool || isBuiltin(m.ToolName) {
			continue
		}
		line := "[" + m.ToolCallID + "] " + m.ToolName + ": " + m.Content + "\n"
		if b.Len()+len(line) > limit {
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// cited are the call ids a judge may cite: the step's successful catalog
// calls.
func cited(c react.Check) map[string]bool {
	ids := map[string]bool{}
	for _, rep := range c.Calls {
		if !rep.Builtin && rep.Outcome == outcome.Success {
			ids[rep.CallID] = true
		}
	}
	return ids
}

// judgement is the object a judge answers with.
type judgement struct {
	Status   string   `json:"status"`
	Reason   string   `json:"reason"`
	Evidence []string `json:"evidence"`
}

// readVerdict reads a judge's answer: the first JSON object of text (a
// model may wrap it in a code fence or a sentence). A status other than
// satisfied, insufficient, blocked or failed, an unreadable answer, or a
// satisfied verdict citing no call id of ids, is an insufficient verdict
// saying so. It never panics, whatever text holds.
func readVerdict(cat *prompt.Catalog, text string, ids map[string]bool) react.StepVerdict {
	unread := func(detail string) react.StepVerdict {
		return react.StepVerdict{Status: react.StepInsufficient, Reason: cat.Text(prompt.ReasonJudgeUnread, "detail", detail)}
	}
	i := strings.IndexByte(text, '{')
	if i < 0 {
		return unread("no JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(text[i:])))
	var j judgement
	if err := dec.Decode(&j); err != nil {
		return unread("not a JSON object with status, reason and evidence")
	}
	var s react.StepStatus
	if err := s.UnmarshalText([]byte(j.Status)); err != nil || s == react.StepNone || s == react.StepPending || s == react.StepInProgress {
		return unread("unknown status")
	}
	v := react.StepVerdict{Status: s, Reason: strings.TrimSpace(j.Reason)}
	for _, e := range j.Evidence {
		if ids[e] && !slices.Contains(v.Evidence, e) {
			v.Evidence = append(v.Evidence, e)
		}
	}
	if s == react.StepSatisfied && len(v.Evidence) == 0 {
		return react.StepVerdict{Status: react.StepInsufficient, Reason: cat.Text(prompt.ReasonJudgeNoCite)}
	}
	return v
}

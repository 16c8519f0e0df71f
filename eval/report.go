package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/reactguard/reactguard/react"
)

// Report is the result of running a set of cases: every case's score, a
// row per category and a total, each figure with its denominator, and the
// runtime's own per-layer metrics over the same runs. It marshals to JSON
// (field names are stable API) and renders as Markdown ([Report.Markdown]).
type Report struct {
	// Model names the model the cases ran with.
	Model string `json:"model"`
	// Cases are the scores of each case, in the order run.
	Cases []CaseResult `json:"cases"`
	// Categories has one row per category with cases, in the order of
	// [Categories]; Total sums them.
	Categories []Row `json:"categories"`
	Total      Row   `json:"total"`
	// Metrics are react.Metrics' figures over every run of the report.
	Metrics []Figure `json:"metrics"`
	// Behaviours counts, per unacceptable behaviour, the cases that showed
	// it (every behaviour, zero included).
	Behaviours []BehaviourTotal `json:"behaviours"`
	// Mistakes counts, per protocol mistake, how often the model made it
	// (deliberate ones of a script included) and in how many cases.
	Mistakes []MistakeTotal `json:"mistakes"`
	// Variants are the misbehaving variants' runs, when they ran
	// ([Options].Variants); nil otherwise.
	Variants []VariantResult `json:"variants,omitempty"`
	// Judged reports that a [Judge] reviewed the answers; Judge counts the
	// cases it found supported over the cases it judged, apart from every
	// deterministic figure.
	Judged bool  `json:"judged,omitempty"`
	Judge  Tally `json:"judge,omitempty"`
}

// BehaviourTotal is how many cases showed an unacceptable behaviour.
type BehaviourTotal struct {
	Behaviour Behaviour `json:"behaviour"`
	Cases     int       `json:"cases"`
}

// MistakeTotal is how often the model made a protocol mistake, and in how
// many cases; Deliberate of them were a script's labelled mistakes.
type MistakeTotal struct {
	Mistake    Mistake `json:"mistake"`
	Count      int     `json:"count"`
	Cases      int     `json:"cases"`
	Deliberate int     `json:"deliberate"`
}

// Row aggregates the cases of a category (or all of them). Each Tally
// counts cases: a case is in a column's Total when it has at least one
// exercised check of that column, and in Passed when every one of them
// passed. Unexercised counts the labelled checks whose call the model
// never made.
type Row struct {
	Category Category `json:"category,omitempty"`
	Cases    int      `json:"cases"`
	// The layers, judged first.
	Call      Tally `json:"call"`
	Execution Tally `json:"execution"`
	Business  Tally `json:"business"`
	// The agent's behaviour: no protocol mistake but the script's
	// deliberate ones, labelled next steps, and no unacceptable behaviour
	// (every case counts in Protocol and Behaviour).
	Protocol  Tally `json:"protocol"`
	Next      Tally `json:"next"`
	Behaviour Tally `json:"behaviour"`
	// The final task (every case counts), then every check of the case
	// at once.
	Final    Tally `json:"final"`
	EndToEnd Tally `json:"end_to_end"`
}

// Tally is passed cases over counted cases, plus the checks left
// unexercised.
type Tally struct {
	Passed      int `json:"passed"`
	Total       int `json:"total"`
	Unexercised int `json:"unexercised,omitempty"`
}

// String returns "passed/total (pp.p%)", or "0/0 (no sample)".
func (t Tally) String() string {
	return react.Rate{Num: int64(t.Passed), Den: int64(t.Total)}.String()
}

func (t *Tally) add(s Score) {
	t.Unexercised += s.Unexercised
	if s.Checks == 0 {
		return
	}
	t.Total++
	if s.OK() {
		t.Passed++
	}
}

func (t *Tally) addBool(ok bool) {
	t.Total++
	if ok {
		t.Passed++
	}
}

func (r *Row) add(c CaseResult) {
	r.Cases++
	r.Call.add(c.Call)
	r.Execution.add(c.Execution)
	r.Business.add(c.Business)
	r.Protocol.addBool(c.Protocol.OK())
	r.Next.add(c.Next)
	r.Behaviour.addBool(len(c.Flagged) == 0)
	r.Final.addBool(c.Final.Passed)
	r.EndToEnd.addBool(c.EndToEnd)
}

// Figure is one of the runtime's metrics: its layer, name, definition and
// value with its denominator.
type Figure struct {
	Layer      string     `json:"layer"`
	Name       string     `json:"name"`
	Definition string     `json:"definition"`
	Rate       react.Rate `json:"rate"`
}

// finish computes the rows and the metrics' figures.
func (r *Report) finish(m *react.Metrics) {
	r.Categories, r.Total = nil, Row{}
	for _, cat := range Categories() {
		row := Row{Category: cat}
		for _, c := range r.Cases {
			if c.Category == cat {
				row.add(c)
				r.Total.add(c)
			}
		}
		if row.Cases > 0 {
			r.Categories = append(r.Categories, row)
		}
	}
	if m != nil {
		r.Metrics = figures(m.Snapshot())
	}
	r.Behaviours = r.Behaviours[:0]
	for _, b := range Behaviours() {
		n := 0
		for _, c := range r.Cases {
			if slices.Contains(c.Flagged, b) {
				n++
			}
		}
		r.Behaviours = append(r.Behaviours, BehaviourTotal{Behaviour: b, Cases: n})
	}
	r.Mistakes = r.Mistakes[:0]
	for _, k := range Mistakes() {
		t := MistakeTotal{Mistake: k}
		for _, c := range r.Cases {
			in := false
			for _, m := range c.Mistakes {
				if m.Kind == k {
					t.Count++
					in = true
					if m.Deliberate {
						t.Deliberate++
					}
				}
			}
			if in {
				t.Cases++
			}
		}
		r.Mistakes = append(r.Mistakes, t)
	}
	r.Judge = Tally{}
	for _, c := range r.Cases {
		if c.Judge != nil && c.Judge.Error == "" {
			r.Judge.addBool(c.Judge.Supported)
		}
	}
}

// figures lists react.Metrics' rates (docs/evaluation.md defines each).
func figures(s react.MetricsSnapshot) []Figure {
	c, e, b := s.Call, s.Execution, s.Business
	return []Figure{
		{"call", "decision", "model turns with a tool call / model turns", c.Decision()},
		{"call", "pairing", "calls with a usable, unique id / calls", c.Pairing()},
		{"call", "resolution", "paired calls naming a visible tool / paired calls", c.Resolution()},
		{"call", "arguments", "resolved calls whose arguments parse and pass the schema / resolved calls", c.Arguments()},
		{"call", "admission", "calls admitted (valid) / calls", c.Admission()},
		{"execution", "success", "attempts that kept the contract / attempts executed", e.Success()},
		{"execution", "first attempt", "calls whose first attempt kept the contract / calls executed", e.FirstAttempt()},
		{"execution", "final", "calls whose final attempt kept the contract / calls executed", e.Final()},
		{"execution", "recovery", "calls recovered by a retry / calls whose first attempt failed", e.Recovery()},
		{"execution", "timeout", "calls ending in timeout / calls executed", e.Status(react.ExecTimeout)},
		{"execution", "unavailable", "calls ending temporarily unavailable / calls executed", e.Status(react.ExecTemporarilyUnavailable)},
		{"execution", "contract violated", "calls ending result_invalid / calls executed", e.Status(react.ExecResultInvalid)},
		{"execution", "permission refused", "calls refused permission / calls that reached a tool", e.Permission()},
		{"business", "new evidence", "results that were new evidence / results that kept the contract", b.NewEvidence()},
		{"business", "insufficient", "results empty or short of the contract / results that kept the contract", b.Insufficient()},
		{"business", "sub-goal met", "runs whose completion conditions held / runs started", b.SubGoals()},
		{"business", "human takeover", "runs with at least one suspension / runs started", b.Takeover()},
		{"business", "approval takeover", "runs with an approval suspension / runs started", b.ApprovalTakeover()},
		{"business", "follow-up takeover", "runs with a follow-up suspension / runs started", b.FollowUpTakeover()},
		{"business", "final task", "cases whose final task passed / cases", b.FinalTask()},
	}
}

// JSON writes the report as indented JSON.
func (r *Report) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Markdown writes the report as Markdown: the table by category and
// layer with denominators, the totals per unacceptable behaviour and
// protocol mistake, the cases that did not pass end to end with what
// differed (the final answer, the ungrounded claims, the side effects and
// the transcript), the misbehaving variants, the judge's verdicts apart,
// and the runtime's metrics.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# reactguard evaluation: %d cases, model %s\n\n", r.Total.Cases, r.Model)
	b.WriteString("Scored in the order of the three layers of success (docs/evaluation.md): first whether the runtime judged each layer's status as labelled " +
		"(call, execution, business), then the agent's protocol mistakes, next steps and behaviours, then the final task. " +
		"Each cell is cases passed / cases with checks of that column.\n\n")
	b.WriteString("| category | cases | call layer | execution layer | business layer | protocol | next steps | no unacceptable behaviour | final task | end to end |\n")
	b.WriteString("|---|---:|---|---|---|---|---|---|---|---|\n")
	row := func(name string, x Row) {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, x.Cases,
			x.Call, x.Execution, x.Business, x.Protocol, x.Next, x.Behaviour, x.Final, x.EndToEnd)
	}
	for _, x := range r.Categories {
		row(x.Category.Title(), x)
	}
	row("**all**", r.Total)
	t := r.Total
	if n := t.Call.Unexercised + t.Execution.Unexercised + t.Business.Unexercised + t.Next.Unexercised; n > 0 {
		fmt.Fprintf(&b, "\nLabelled checks not exercised (the model never made the labelled call): call %d, execution %d, business %d, next step %d.\n",
			t.Call.Unexercised, t.Execution.Unexercised, t.Business.Unexercised, t.Next.Unexercised)
	}
	b.WriteString("\n## Unacceptable behaviours and protocol mistakes\n\n| behaviour | cases |\n|---|---:|\n")
	for _, x := range r.Behaviours {
		fmt.Fprintf(&b, "| %s | %d |\n", x.Behaviour, x.Cases)
	}
	b.WriteString("\n| protocol mistake | made | in cases | of them the script's deliberate ones |\n|---|---:|---:|---:|\n")
	for _, x := range r.Mistakes {
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", x.Mistake, x.Count, x.Cases, x.Deliberate)
	}
	var failed []CaseResult
	for _, c := range r.Cases {
		if !c.EndToEnd {
			failed = append(failed, c)
		}
	}
	if len(failed) > 0 {
		b.WriteString("\n## Cases not passed end to end\n")
		for _, c := range failed {
			caseMarkdown(&b, c)
		}
	}
	if r.Variants != nil {
		passed := 0
		for _, v := range r.Variants {
			if v.Passed {
				passed++
			}
		}
		fmt.Fprintf(&b, "\n## Misbehaving variants\n\n%s: flagged exactly as labelled, the runtime protected the user (executions, statuses), not passed end to end; each through Resume and ResumeRun.\n",
			Tally{Passed: passed, Total: len(r.Variants)})
		for _, v := range r.Variants {
			if v.Passed {
				continue
			}
			fmt.Fprintf(&b, "\n- `%s` / %s (%s)\n", v.Case, v.Variant, v.Via)
			for _, f := range v.Failures {
				fmt.Fprintf(&b, "  - %s\n", f)
			}
			fmt.Fprintf(&b, "  - answer: %s; executions: %s\n", oneLine(v.Answer), executionsText(v.Executions))
		}
	}
	if r.Judged {
		fmt.Fprintf(&b, "\n## Judge (model review of open claims; apart from every figure above)\n\nanswers supported: %s\n", r.Judge)
		for _, c := range r.Cases {
			if c.Judge == nil || (c.Judge.Supported && c.Judge.Error == "") {
				continue
			}
			if c.Judge.Error != "" {
				fmt.Fprintf(&b, "- `%s`: not judged: %s\n", c.ID, oneLine(c.Judge.Error))
				continue
			}
			fmt.Fprintf(&b, "- `%s`: unsupported %s: %s\n", c.ID, strings.Join(quoteAll(c.Judge.Unsupported), ", "), oneLine(c.Judge.Reason))
		}
	}
	if len(r.Metrics) > 0 {
		b.WriteString("\n## Runtime metrics over these runs (react.Metrics)\n\n")
		b.WriteString("| layer | figure | definition | value |\n|---|---|---|---|\n")
		for _, f := range r.Metrics {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", f.Layer, f.Name, f.Definition, f.Rate)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// caseMarkdown writes what a team needs to act on a failing case.
func caseMarkdown(b *strings.Builder, c CaseResult) {
	fmt.Fprintf(b, "\n### `%s` (%s, ended %s, goal %s)\n\n", c.ID, c.Category, statusText(c.Status), c.Goal)
	if c.Error != "" {
		fmt.Fprintf(b, "- error: %s\n", oneLine(c.Error))
	}
	for _, s := range []struct {
		name string
		sc   Score
	}{{"call layer", c.Call}, {"execution layer", c.Execution}, {"business layer", c.Business}, {"protocol", c.Protocol}, {"next step", c.Next}} {
		for _, f := range s.sc.Failures {
			fmt.Fprintf(b, "- %s: %s\n", s.name, f)
		}
		if s.sc.Unexercised > 0 {
			fmt.Fprintf(b, "- %s: %d check(s) not exercised\n", s.name, s.sc.Unexercised)
		}
	}
	for _, f := range c.Flagged {
		fmt.Fprintf(b, "- unacceptable behaviour: %s\n", f)
	}
	for _, f := range c.Final.Failures {
		fmt.Fprintf(b, "- final task: %s\n", f)
	}
	fmt.Fprintf(b, "- final answer: %s\n", oneLine(c.Answer))
	if len(c.Ungrounded) > 0 {
		fmt.Fprintf(b, "- ungrounded claims: %s\n", strings.Join(quoteAll(c.Ungrounded), ", "))
	}
	fmt.Fprintf(b, "- executions: %s\n", executionsText(c.Executions))
	b.WriteString("- transcript:\n\n```\n")
	for _, m := range c.Transcript {
		switch m.Role {
		case react.RoleSystem:
			continue
		case react.RoleAssistant:
			line := "assistant:"
			if m.Content != "" {
				line += " " + clip(m.Content)
			}
			for _, tc := range m.ToolCalls {
				line += fmt.Sprintf(" [%s %s %s]", tc.ID, tc.Name, clip(tc.Args))
			}
			b.WriteString(line + "\n")
		case react.RoleTool:
			fmt.Fprintf(b, "tool %s (%s): %s\n", m.ToolCallID, m.ToolName, clip(m.Content))
		default:
			fmt.Fprintf(b, "%s: %s\n", m.Role, clip(m.Content))
		}
	}
	b.WriteString("```\n")
}

// clip writes s on one line, at most 300 runes.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// executionsText writes tool=n pairs in name order.
func executionsText(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return strconv.Quote(s)
}

// Passed reports whether every case passed end to end and every
// misbehaving variant that ran passed (flagged exactly, the user
// protected). The judge's verdicts do not count.
func (r *Report) Passed() bool {
	for _, v := range r.Variants {
		if !v.Passed {
			return false
		}
	}
	return r.Total.EndToEnd.Total > 0 && r.Total.EndToEnd.Passed == r.Total.EndToEnd.Total
}

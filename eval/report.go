package eval

import (
	"encoding/json"
	"fmt"
	"io"
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
	// Categories has one row per category with cases, in the seed's
	// order; Total sums them.
	Categories []Row `json:"categories"`
	Total      Row   `json:"total"`
	// Metrics are react.Metrics' figures over every run of the report.
	Metrics []Figure `json:"metrics"`
}

// Row aggregates the cases of a category (or all of them). Each Tally
// counts cases: a case is in a column's Total when it has at least one
// exercised check of that column, and in Passed when every one of them
// passed. Unexercised counts the labelled checks whose call the model
// never made.
type Row struct {
	Category Category `json:"category,omitempty"`
	Cases    int      `json:"cases"`
	// The layers, judged first (seed 003's order).
	Call      Tally `json:"call"`
	Execution Tally `json:"execution"`
	Business  Tally `json:"business"`
	// The agent's behaviour: labelled next steps, and no unacceptable
	// behaviour (every case counts).
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
		{"business", "sub-goal met", "runs whose completion conditions held / runs ended", b.SubGoals()},
		{"business", "approval takeover", "approval suspensions / runs started", b.ApprovalTakeover()},
		{"business", "follow-up takeover", "follow-up suspensions / runs started", b.FollowUpTakeover()},
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
// layer with denominators, the cases that did not pass end to end with
// what differed, and the runtime's metrics.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# reactguard evaluation: %d cases, model %s\n\n", r.Total.Cases, r.Model)
	b.WriteString("Scored in seed 003's order: first whether the runtime judged each layer's status as labelled " +
		"(call, execution, business), then the agent's next steps and behaviours, then the final task. " +
		"Each cell is cases passed / cases with checks of that column.\n\n")
	b.WriteString("| category | cases | call layer | execution layer | business layer | next steps | no unacceptable behaviour | final task | end to end |\n")
	b.WriteString("|---|---:|---|---|---|---|---|---|---|\n")
	row := func(name string, x Row) {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", name, x.Cases,
			x.Call, x.Execution, x.Business, x.Next, x.Behaviour, x.Final, x.EndToEnd)
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
	var failed []CaseResult
	for _, c := range r.Cases {
		if !c.EndToEnd {
			failed = append(failed, c)
		}
	}
	if len(failed) > 0 {
		b.WriteString("\n## Cases not passed end to end\n\n")
		for _, c := range failed {
			fmt.Fprintf(&b, "- `%s` (%s, ended %s, goal %s)", c.ID, c.Category, statusText(c.Status), c.Goal)
			if c.Error != "" {
				fmt.Fprintf(&b, ", error: %s", oneLine(c.Error))
			}
			b.WriteString("\n")
			for _, s := range []struct {
				name string
				sc   Score
			}{{"call layer", c.Call}, {"execution layer", c.Execution}, {"business layer", c.Business}, {"next step", c.Next}} {
				for _, f := range s.sc.Failures {
					fmt.Fprintf(&b, "  - %s: %s\n", s.name, f)
				}
				if s.sc.Unexercised > 0 {
					fmt.Fprintf(&b, "  - %s: %d check(s) not exercised\n", s.name, s.sc.Unexercised)
				}
			}
			for _, f := range c.Flagged {
				fmt.Fprintf(&b, "  - unacceptable behaviour: %s\n", f)
			}
			for _, f := range c.Final.Failures {
				fmt.Fprintf(&b, "  - final task: %s\n", f)
			}
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

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return strconv.Quote(s)
}

// Passed reports whether every case passed end to end.
func (r *Report) Passed() bool {
	return r.Total.EndToEnd.Total > 0 && r.Total.EndToEnd.Passed == r.Total.EndToEnd.Total
}

package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/eval"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
)

var update = flag.Bool("update", false, "rewrite testdata/report.md")

// The set follows the evaluation set of docs/evaluation.md: at least six
// labelled cases in each of the six categories, each case labelled in all
// three layers (call, execution, business), every unacceptable behaviour
// exercised by a misbehaving variant, every protocol mistake provoked by a
// case, tasks distinct (a replaying server tells cases apart by them).
func TestBuiltinSet_Shape(t *testing.T) {
	cases := eval.Builtin()
	assert.GreaterOrEqual(t, len(cases), 36)
	per := map[eval.Category]int{}
	tasks := map[string]string{}
	flagged := map[eval.Behaviour]int{}
	provoked := map[eval.Mistake]int{}
	for _, c := range cases {
		per[c.Category]++
		if other, dup := tasks[c.Task]; dup {
			t.Errorf("cases %s and %s have the same task", c.ID, other)
		}
		tasks[c.Task] = c.ID
		assert.NotEmpty(t, c.Labels.Calls, "%s labels calls", c.ID)
		var call, execution, business bool
		for _, l := range c.Labels.Calls {
			call = call || l.Call != nil || (l.Code != nil && l.Code.Layer() == errcode.LayerCall)
			execution = execution || l.Execution != nil || l.Attempts > 0 || l.First != nil
			business = business || l.Business != nil || (l.Code != nil && l.Code.Layer() == errcode.LayerBusiness)
		}
		assert.True(t, call && execution && business, "%s labels all three layers (call %v, execution %v, business %v)", c.ID, call, execution, business)
		assert.True(t, strings.HasPrefix(c.ID, strings.SplitN(c.Category.String(), "_", 2)[0]), "%s is named after its category %s", c.ID, c.Category)
		for _, v := range c.Variants {
			for _, f := range v.Flags {
				flagged[f]++
			}
		}
		for _, m := range c.Labels.Protocol {
			provoked[m]++
		}
	}
	for _, cat := range eval.Categories() {
		assert.GreaterOrEqual(t, per[cat], 6, "category %s has at least six cases", cat)
	}
	for _, b := range eval.Behaviours() {
		assert.Positive(t, flagged[b], "behaviour %s has a misbehaving variant", b)
	}
	for _, m := range eval.Mistakes() {
		if m != eval.MistakeNoCall { // a turn without a call is a variant's, not a case's
			assert.Positive(t, provoked[m], "protocol mistake %s is provoked by a case", m)
		}
	}
}

// With the scripted model that behaves well, the set scores 100% on every
// layer, every column, every category, with nothing left unexercised.
func TestBuiltinSet_ScriptedScoresFull(t *testing.T) {
	rep, err := eval.Run(context.Background(), eval.Builtin(), eval.Options{})
	require.NoError(t, err)
	require.True(t, rep.Passed(), "every case passes end to end:\n%s", markdown(t, rep))
	for _, row := range append(slices.Clone(rep.Categories), rep.Total) {
		for name, tally := range map[string]eval.Tally{"call": row.Call, "execution": row.Execution, "business": row.Business,
			"next": row.Next, "behaviour": row.Behaviour, "final": row.Final, "end to end": row.EndToEnd} {
			assert.Equal(t, tally.Total, tally.Passed, "%s: %s %s", row.Category, name, tally)
			assert.Positive(t, tally.Total, "%s: %s has cases", row.Category, name)
			assert.Zero(t, tally.Unexercised, "%s: %s", row.Category, name)
		}
	}
	for _, c := range rep.Cases {
		assert.Empty(t, c.Error, c.ID)
		assert.Empty(t, c.Flagged, "%s: the well-behaved script shows no detectable behaviour", c.ID)
	}
	var final react.Rate
	for _, f := range rep.Metrics {
		if f.Name == "final task" {
			final = f.Rate
		}
	}
	n := int64(len(rep.Cases))
	assert.Equal(t, react.Rate{Num: n, Den: n}, final, "the report carries react.Metrics with one task per case")
}

// make eval runs the misbehaving variants: each is flagged exactly as
// labelled and the runtime protected the user (executions of every tool,
// statuses), through Resume and ResumeRun. A library change that lets a
// declined write run, retries a forbidden call or an uncertain write,
// stalls on a DEFERRED, misses a repeat or never trips the fingerprint
// guard fails here (checked by making each change; see docs/evaluation.md).
func TestBuiltinSet_VariantsProtectTheUser(t *testing.T) {
	rep, err := eval.Run(context.Background(), eval.Builtin(), eval.Options{Variants: true})
	require.NoError(t, err)
	n := 0
	for _, c := range eval.Builtin() {
		n += len(c.Variants)
	}
	require.Len(t, rep.Variants, 2*n, "every variant through Resume and through ResumeRun")
	for _, v := range rep.Variants {
		assert.True(t, v.Passed, "%s / %s (%s): %v", v.Case, v.Variant, v.Via, v.Failures)
	}
	assert.True(t, rep.Passed())
	assert.Contains(t, markdown(t, rep), fmt.Sprintf("%d/%d (100.0%%): flagged exactly", 2*n, 2*n))

	// A variant whose protection does not hold fails the report.
	c := builtin(t, "permission-01-declined-approval")
	v := c.Variants[0]
	v.Protect.Executions = map[string]int{"delete_account": 1}
	vrs, err := c.RunVariant(context.Background(), v, eval.Options{})
	require.NoError(t, err)
	for _, vr := range vrs {
		assert.False(t, vr.Passed)
		assert.Contains(t, vr.Failures, "the runtime did not protect the user: delete_account executed 0 times, want 1")
	}
}

// The report's business figures, derived from the cases' labels by hand
// rules, not from a golden file: every case is one run started; its goal
// is met when its label says met; it was taken over when the run
// suspended at least once (the case gives decisions, or ends suspended).
func TestReport_MetricsFromLabels(t *testing.T) {
	cases := eval.Builtin()
	rep, err := eval.Run(context.Background(), cases, eval.Options{})
	require.NoError(t, err)
	var met, takeover, approval, followUp int64
	for _, c := range cases {
		if g := c.Labels.Expect.Goal; g != nil && *g == react.GoalMet {
			met++
		}
		var a, f bool
		for _, d := range c.Decisions {
			a = a || d.Approve || d.Decline != nil
			f = f || d.Answer != ""
		}
		for _, turn := range c.Script {
			for _, call := range turn.Calls {
				a = a || call.Name == react.ToolApproval
				f = f || call.Name == react.ToolFollowUp
			}
		}
		if a || f {
			takeover++
		}
		if a {
			approval++
		}
		if f {
			followUp++
		}
	}
	started := int64(len(cases))
	want := map[string]react.Rate{
		"sub-goal met":       {Num: met, Den: started},
		"human takeover":     {Num: takeover, Den: started},
		"approval takeover":  {Num: approval, Den: started},
		"follow-up takeover": {Num: followUp, Den: started},
		"final task":         {Num: started, Den: started},
	}
	got := map[string]react.Rate{}
	for _, f := range rep.Metrics {
		if _, ok := want[f.Name]; ok {
			got[f.Name] = f.Rate
		}
	}
	assert.Equal(t, want, got)
	assert.Positive(t, met)
	assert.Less(t, takeover, started, "takeover is a share of runs: at most every run")
}

// Each misbehaving variant is flagged with exactly the behaviours it
// shows: no more (no false alarm on the others labelled unacceptable),
// no less.
func TestVariants_FlaggedExactly(t *testing.T) {
	for _, c := range eval.Builtin() {
		for _, v := range c.Variants {
			t.Run(c.ID+"/"+v.Name, func(t *testing.T) {
				res, err := c.Variant(v).Run(context.Background(), nil, eval.Options{})
				require.NoError(t, err)
				assert.ElementsMatch(t, v.Flags, res.Flagged, "flagged behaviours")
				assert.False(t, res.EndToEnd, "a misbehaving run does not pass end to end")
				vrs, err := c.RunVariant(context.Background(), v, eval.Options{})
				require.NoError(t, err)
				require.Len(t, vrs, 2)
				assert.Equal(t, []string{"resume", "resume_run"}, []string{vrs[0].Via, vrs[1].Via})
				for _, vr := range vrs {
					assert.True(t, vr.Passed, "%s: %v", vr.Via, vr.Failures)
				}
			})
		}
	}
}

// One test per unacceptable behaviour: it fails if the harness stops
// detecting that behaviour in any variant that shows it.
func TestBehaviour_Detected(t *testing.T) {
	for _, b := range eval.Behaviours() {
		t.Run(b.String(), func(t *testing.T) {
			n := 0
			for _, c := range eval.Builtin() {
				for _, v := range c.Variants {
					if !slices.Contains(v.Flags, b) {
						continue
					}
					n++
					res, err := c.Variant(v).Run(context.Background(), nil, eval.Options{})
					require.NoError(t, err)
					assert.Contains(t, res.Flagged, b, "%s / %s", c.ID, v.Name)
				}
			}
			require.Positive(t, n, "a variant shows %s", b)
		})
	}
}

// The harness fails what differs from the labels: each mutation of a
// well-passing case makes exactly the column it touches fail.
func TestScoring_Mislabelled(t *testing.T) {
	find := func(id string) *eval.Case {
		for _, c := range eval.Builtin() {
			if c.ID == id {
				cp := *c
				cp.Labels.Calls = slices.Clone(c.Labels.Calls)
				return &cp
			}
		}
		t.Fatalf("no case %s", id)
		return nil
	}
	tests := []struct {
		name   string
		id     string
		mutate func(c *eval.Case)
		failed func(r eval.CaseResult) bool
	}{
		{"call status", "protocol-02-missing-parameter", func(c *eval.Case) { s := react.CallValid; c.Labels.Calls[0].Call = &s },
			func(r eval.CaseResult) bool {
				return !r.Call.OK() && r.Execution.OK() && r.Business.OK() && r.Final.Passed
			}},
		{"execution status", "execution-01-timeout", func(c *eval.Case) { s := react.ExecOK; c.Labels.Calls[0].Execution = &s },
			func(r eval.CaseResult) bool { return r.Call.OK() && !r.Execution.OK() && r.Business.OK() }},
		{"attempts", "execution-02-rate-limit-recovered", func(c *eval.Case) { c.Labels.Calls[0].Attempts = 1 },
			func(r eval.CaseResult) bool { return !r.Execution.OK() }},
		{"first attempt", "execution-02-rate-limit-recovered", func(c *eval.Case) { c.Labels.Calls[0].First = &eval.Verdict{Outcome: 1} },
			func(r eval.CaseResult) bool { return !r.Execution.OK() }},
		{"business status", "business-01-empty-then-refined", func(c *eval.Case) { s := react.BusinessEvidence; c.Labels.Calls[0].Business = &s },
			func(r eval.CaseResult) bool { return r.Execution.OK() && !r.Business.OK() }},
		{"next step", "business-01-empty-then-refined", func(c *eval.Case) { c.Labels.Calls[0].Next = []eval.Step{eval.StepFail} },
			func(r eval.CaseResult) bool { return !r.Next.OK() && r.Final.Passed }},
		{"final status", "normal-01-order-status", func(c *eval.Case) { c.Labels.Expect.Status = react.Failed },
			func(r eval.CaseResult) bool { return !r.Final.Passed && r.Call.OK() }},
		{"final output", "normal-01-order-status", func(c *eval.Case) {
			c.Labels.Expect.Outputs = map[string]json.RawMessage{"status": json.RawMessage(`"lost"`)}
		},
			func(r eval.CaseResult) bool { return !r.Final.Passed }},
		{"side effects", "normal-03-approved-write", func(c *eval.Case) { c.Labels.Expect.Executions = map[string]int{"create_ticket": 2} },
			func(r eval.CaseResult) bool { return !r.Final.Passed }},
		{"label never exercised", "normal-01-order-status", func(c *eval.Case) {
			c.Labels.Calls = append(c.Labels.Calls, eval.CallLabel{Tool: "get_order", Nth: 2, Attempts: 1})
		}, func(r eval.CaseResult) bool { return r.Execution.Unexercised == 1 && !r.EndToEnd }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := find(tt.id)
			tt.mutate(c)
			res, err := c.Run(context.Background(), nil, eval.Options{})
			require.NoError(t, err)
			assert.True(t, tt.failed(res), "%+v", res)
			assert.False(t, res.EndToEnd)
		})
	}
}

// Another model than the script: the labels of the script's deliberate
// mistakes are not exercised, and a model that gives up at once fails the
// final tasks it should have completed.
func TestRun_OtherModel(t *testing.T) {
	giveUp := reacttest.Func(func(react.Request) react.Response {
		return reacttest.Calls(reacttest.FailNode("x", "I give up"))
	})
	var cases []*eval.Case
	for _, c := range eval.Builtin() {
		if c.ID == "protocol-02-missing-parameter" || c.ID == "execution-01-timeout" {
			cases = append(cases, c)
		}
	}
	rep, err := eval.Run(context.Background(), cases, eval.Options{Model: func(*eval.Case) react.Model { return giveUp }, ModelName: "give-up"})
	require.NoError(t, err)
	require.Len(t, rep.Cases, 2)
	p, e := rep.Cases[0], rep.Cases[1]
	if p.ID != "protocol-02-missing-parameter" {
		p, e = e, p
	}
	for _, c := range cases {
		if c.ID == p.ID {
			for _, l := range c.Labels.Calls {
				require.True(t, l.ScriptOnly, "every label of the protocol case is the script's mistake or follows it")
			}
		}
	}
	assert.Zero(t, p.Call.Unexercised+p.Execution.Unexercised+p.Business.Unexercised, "the script's deliberate mistakes do not apply to another model")
	assert.Zero(t, p.Call.Checks+p.Execution.Checks+p.Business.Checks)
	assert.True(t, p.Protocol.OK(), "a model that makes no protocol mistake passes the protocol column")
	assert.False(t, p.Final.Passed, "the order was never looked up")
	assert.Positive(t, e.Execution.Unexercised, "the model never called get_rates")
	assert.Equal(t, []string{"get_rates executed 0 times, want 1"}, e.Final.Failures, "failing is the right end, but the read was never tried")
	assert.False(t, e.EndToEnd)
	md := markdown(t, rep)
	assert.Contains(t, md, "model give-up")
	assert.Contains(t, md, "Labelled checks not exercised")
	assert.Contains(t, md, "## Cases not passed end to end")
}

// A run the model cannot finish is a result, not an error.
func TestRun_ModelError(t *testing.T) {
	c := eval.Builtin()[0]
	res, err := c.Run(context.Background(), reacttest.Script(), eval.Options{})
	require.NoError(t, err)
	assert.Equal(t, react.Interrupted, res.Status)
	assert.Contains(t, res.Error, "script exhausted")
	assert.False(t, res.Final.Passed)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = eval.Run(ctx, eval.Builtin(), eval.Options{})
	assert.ErrorIs(t, err, context.Canceled)
}

// The report renders as Markdown (golden file) and round-trips as JSON.
func TestReport(t *testing.T) {
	rep, err := eval.Run(context.Background(), eval.Builtin(), eval.Options{})
	require.NoError(t, err)
	md := markdown(t, rep)
	golden := filepath.Join("testdata", "report.md")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(md), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), md, "go test ./eval -run TestReport -update rewrites the golden file")

	var buf bytes.Buffer
	require.NoError(t, rep.JSON(&buf))
	var back eval.Report
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
	assert.Equal(t, rep.Total, back.Total)
	assert.Len(t, back.Cases, len(rep.Cases))
	assert.Equal(t, rep.Cases[0].Calls, back.Cases[0].Calls)
}

// Users add their own directory of cases; bad files are refused with the
// file's name and what is wrong.
func TestLoad(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("cases", "normal-01-order-status.json"))
	require.NoError(t, err)
	other := strings.Replace(string(good), `"normal-01-order-status"`, `"mine-01"`, 1)
	cs, err := eval.Load(fstest.MapFS{"a/one.json": {Data: good}, "a/b/two.json": {Data: []byte(other)}, "a/notes.txt": {Data: []byte("x")}}, "a")
	require.NoError(t, err)
	require.Len(t, cs, 2)
	assert.Equal(t, []string{"mine-01", "normal-01-order-status"}, []string{cs[0].ID, cs[1].ID})

	tests := []struct {
		name, edit, want string
	}{
		{"unknown field", `"title":`, `unknown field "titel"`},
		{"bad category", `"category": "normal_success"`, `unknown category`},
		{"bad effect", `"effect": "read"`, `effect "reed"`},
		{"bad error kind", `"kind": "not_found"`, `error kind "missing"`},
		{"bad status label", `"execution": "ok"`, `unknown execution status`},
		{"bad step", `"next": ["output_set"`, `unknown step`},
		{"variant flags an unlabelled behaviour", `"flags": ["alter_facts"]`, `which the case does not list as unacceptable`},
		{"bad expected status", `"status": "finished"`, `expect.status`},
	}
	replace := map[string]string{
		"unknown field":                         `"titel":`,
		"bad category":                          `"category": "normal"`,
		"bad effect":                            `"effect": "reed"`,
		"bad error kind":                        `"kind": "missing"`,
		"bad status label":                      `"execution": "fine"`,
		"bad step":                              `"next": ["celebrate"`,
		"variant flags an unlabelled behaviour": `"flags": ["retry_forbidden"]`,
		"bad expected status":                   `"status": "interrupted"`,
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, string(good), tt.edit)
			bad := strings.Replace(string(good), tt.edit, replace[tt.name], 1)
			_, err := eval.Load(fstest.MapFS{"cases/bad.json": {Data: []byte(bad)}}, "cases")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "cases/bad.json")
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err = eval.Load(fstest.MapFS{"x/a.json": {Data: good}, "x/b.json": {Data: good}}, "x")
	assert.ErrorContains(t, err, `case id "normal-01-order-status" is also used by x/a.json`)
	_, err = eval.Load(fstest.MapFS{"x/a.txt": {Data: good}}, "x")
	assert.ErrorContains(t, err, "no *.json case")
	_, err = eval.Parse(append(slices.Clone(good), []byte(`{}`)...))
	assert.ErrorContains(t, err, "data after the case")
}

// Checks of a case beyond JSON decoding.
func TestCase_Check(t *testing.T) {
	base := func() eval.Case {
		return eval.Case{ID: "x", Category: eval.NormalSuccess, Task: "t",
			Tools:  []eval.ToolSpec{{Name: "t", Effect: "read", Responses: []eval.Response{{Result: json.RawMessage(`1`)}}}},
			Script: []eval.Turn{{Text: "hi"}},
			Labels: eval.Labels{Calls: []eval.CallLabel{{Tool: "t", Attempts: 1}}, Expect: eval.Expect{Status: react.Finished}}}
	}
	empty := ""
	tests := []struct {
		name   string
		mutate func(c *eval.Case)
		want   string
	}{
		{"no id", func(c *eval.Case) { c.ID = " " }, "no id"},
		{"no category", func(c *eval.Case) { c.Category = 0 }, "no category"},
		{"no task", func(c *eval.Case) { c.Task = "" }, "no task"},
		{"no script", func(c *eval.Case) { c.Script = nil }, "no script"},
		{"tool without responses", func(c *eval.Case) { c.Tools[0].Responses = nil }, "no responses"},
		{"tool twice", func(c *eval.Case) { c.Tools = append(c.Tools, c.Tools[0]) }, "defined twice"},
		{"result not JSON", func(c *eval.Case) { c.Tools[0].Responses[0].Result = json.RawMessage(`{`) }, "result is not JSON"},
		{"business error without code", func(c *eval.Case) { c.Tools[0].Responses[0].Error = &eval.ErrorSpec{Kind: "business"} }, "needs a code"},
		{"bad param source", func(c *eval.Case) { c.Tools[0].Params = map[string]eval.ParamSource{"a": {From: "result"}} }, "needs tool and field"},
		{"bad contract", func(c *eval.Case) { c.Tools[0].Contract = &eval.ContractSpec{Empty: "sometimes"} }, `empty "sometimes"`},
		{"condition without path", func(c *eval.Case) {
			c.Tools[0].Contract = &eval.ContractSpec{Sufficient: []eval.Condition{{}}}
		}, "has no path"},
		{"bad verify", func(c *eval.Case) { c.Tools[0].Verify = &eval.VerifySpec{Status: "maybe"} }, `status "maybe"`},
		{"bad schema", func(c *eval.Case) { c.Tools[0].InputSchema = json.RawMessage(`{"type": 3}`) }, "input_schema"},
		{"two decisions in one", func(c *eval.Case) { c.Decisions = []eval.Decision{{Approve: true, Decline: &empty}} }, "exactly one"},
		{"label checking nothing", func(c *eval.Case) { c.Labels.Calls[0].Attempts = 0 }, "checks nothing"},
		{"negative nth", func(c *eval.Case) { c.Labels.Calls[0].Nth = -1 }, "negative nth"},
		{"variant without script", func(c *eval.Case) { c.Variants = []eval.Variant{{Name: "v"}} }, "no name or no script"},
	}
	c := base()
	require.NoError(t, c.Check())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.mutate(&c)
			assert.ErrorContains(t, c.Check(), tt.want)
		})
	}
}

// Parsing a case never panics, whatever the bytes.
func FuzzParse(f *testing.F) {
	entries, err := os.ReadDir("cases")
	require.NoError(f, err)
	for _, e := range entries[:5] {
		b, err := os.ReadFile(filepath.Join("cases", e.Name()))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"id":"x","category":"normal_success","task":"t","script":[{}],"tools":[{"name":"t","effect":"read","responses":[{}]}],"labels":{"expect":{"status":"finished"}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := eval.Parse(b)
		if err != nil {
			return
		}
		// A case that parses runs, with its script, without panicking.
		res, err := c.Run(context.Background(), nil, eval.Options{})
		require.NoError(t, err)
		assert.Equal(t, c.ID, res.ID)
	})
}

func markdown(t *testing.T, rep *eval.Report) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, rep.Markdown(&b))
	return b.String()
}

// builtin returns a copy of the built-in case id.
func builtin(t *testing.T, id string) *eval.Case {
	t.Helper()
	for _, c := range eval.Builtin() {
		if c.ID == id {
			cp := *c
			return &cp
		}
	}
	t.Fatalf("no case %s", id)
	return nil
}

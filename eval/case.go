package eval

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/react"
)

// Case is one labelled task of the evaluation set: the user's words, the
// node and its tools (fakes that answer from data), a scripted model that
// behaves well, the labels, and misbehaving variants of the script. It is
// read from a JSON file (see [Load] and docs/evaluation.md for the format);
// field names are stable API.
type Case struct {
	// ID identifies the case; unique within a set.
	ID string `json:"id"`
	// Category is the kind of task (one of six).
	Category Category `json:"category"`
	// Title says in one line what the case checks.
	Title string `json:"title"`
	// Task is the user's words that start the run.
	Task string `json:"task"`
	// Node is the node to run. When Node.Tools is empty, every tool of
	// the case is visible, in order.
	Node react.Node `json:"node"`
	// Tools are the case's tools.
	Tools []ToolSpec `json:"tools"`
	// Decisions answer the run's suspensions: approvals and declines are
	// used in order for approval suspensions, answers in order for
	// follow-ups. A suspension with no decision left ends the run
	// suspended.
	Decisions []Decision `json:"decisions,omitempty"`
	// Script is the model of a well-behaved agent: one turn per model
	// request. Real models ignore it.
	Script []Turn `json:"script"`
	// Labels are the expected statuses, next steps, unacceptable
	// behaviours and final result.
	Labels Labels `json:"labels"`
	// Variants are misbehaving scripts and the behaviours the harness must
	// flag for each (tests run them; see [Variant]).
	Variants []Variant `json:"variants,omitempty"`

	file string // where the case was read from, for messages
}

// ToolSpec is a fake tool of a case: what the model sees and how the tool
// answers.
type ToolSpec struct {
	// Name is the tool's name.
	Name string `json:"name"`
	// Description is shown to the model.
	Description string `json:"description"`
	// Effect is "read" or "write" (writes pass the write gate and need the
	// user's approval).
	Effect string `json:"effect"`
	// InputSchema is the JSON Schema of the arguments; empty means
	// {"type":"object"}.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Params declares where parameter values must come from (the param
	// contract).
	Params map[string]ParamSource `json:"params,omitempty"`
	// Retry is the retry policy (attempts, the first included); nil means
	// no retry.
	Retry *RetrySpec `json:"retry,omitempty"`
	// Pollable opts the tool out of the fingerprint guard.
	Pollable bool `json:"pollable,omitempty"`
	// Contract is the tool's response contract.
	Contract *ContractSpec `json:"contract,omitempty"`
	// Responses are what the tool answers: for each execution, the first
	// response whose Match holds and whose Times is not used up. An
	// execution no response answers returns a TOOL_ERROR.
	Responses []Response `json:"responses"`
	// Verify answers the write gate's verification of an uncertain write.
	Verify *VerifySpec `json:"verify,omitempty"`
}

// ParamSource is a parameter's provenance: from "user", or from "result"
// (Tool, Field), or from "step" (Step, Field: an output an earlier step of
// a task verified), or "free".
type ParamSource struct {
	From  string `json:"from"`
	Tool  string `json:"tool,omitempty"`
	Field string `json:"field,omitempty"`
	Step  string `json:"step,omitempty"`
}

// RetrySpec is a tool's retry policy, without delays (the harness never
// waits).
type RetrySpec struct {
	Attempts int `json:"attempts"`
}

// ContractSpec is a tool's response contract in data form.
type ContractSpec struct {
	// Empty is "allowed" (default), "fails" or "answer": whether an empty
	// result is a legal answer, and with "answer" that it is the answer
	// itself ("no invoice is overdue": evidence, and a 0 in the final
	// answer is grounded by it).
	Empty string `json:"empty,omitempty"`
	// BusinessSpec holds freshness, paging, pending jobs, walls and
	// provenance (its fields are the contract's own in JSON).
	BusinessSpec
	// BusinessCode, when set, reads bodies {"code": n, "message": "…"}:
	// a code other than 0 is a business failure whose downstream code is
	// BusinessCode.n.
	BusinessCode string `json:"business_code,omitempty"`
	// Output is the JSON Schema a result must satisfy.
	Output json.RawMessage `json:"output,omitempty"`
	// Sufficient are the conditions a non-empty result must meet to serve
	// the goal; a result that misses one is "executed, business not
	// satisfied".
	Sufficient []Condition `json:"sufficient,omitempty"`
}

// Condition is a check of a result: the value(s) at Path (dotted, arrays
// walked: any element) must exist, and equal Equals when it is given, and
// be an array of at least MinItems elements when it is given.
type Condition struct {
	Path     string          `json:"path"`
	Equals   json.RawMessage `json:"equals,omitempty"`
	MinItems int             `json:"min_items,omitempty"`
	// Reason says what is missing when the condition fails.
	Reason string `json:"reason,omitempty"`
}

// Response is one answer of a fake tool.
type Response struct {
	// Match lists top-level arguments that must equal the given JSON
	// values (canonically) for this response to apply; empty matches
	// every call.
	Match map[string]json.RawMessage `json:"match,omitempty"`
	// Times is how often this response may be used; 0 means without
	// limit.
	Times int `json:"times,omitempty"`
	// After, when set, names a tool of the case (a write) that must have
	// executed before this response applies: what a read says after the
	// write changed it.
	After string `json:"after,omitempty"`
	// Result is the tool's payload (absent: null).
	Result json.RawMessage `json:"result,omitempty"`
	// Error, when set, makes the tool fail instead.
	Error *ErrorSpec `json:"error,omitempty"`
}

// ErrorSpec is a tool failure: Kind is one of not_found, forbidden,
// unavailable, rate_limited, timeout, unreachable, io, too_large, business
// (with Code, the downstream code) or error (a plain error: TOOL_ERROR).
type ErrorSpec struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}

// VerifySpec answers a write's verification: Status is applied,
// not_applied or unknown; Result is the write's result when applied.
type VerifySpec struct {
	Status string          `json:"status"`
	Result json.RawMessage `json:"result,omitempty"`
}

// Decision is the user's answer to one suspension: exactly one of Approve
// (true), Decline (the reason, may be empty but must be present) or Answer.
type Decision struct {
	Approve bool    `json:"approve,omitempty"`
	Decline *string `json:"decline,omitempty"`
	Answer  string  `json:"answer,omitempty"`
}

// Turn is one scripted model turn: text and/or tool calls.
type Turn struct {
	Text  string     `json:"text,omitempty"`
	Calls []CallSpec `json:"calls,omitempty"`
}

// CallSpec is one scripted tool call. Args is used verbatim; RawArgs,
// when set, replaces it with text that need not be JSON (to send
// malformed arguments).
type CallSpec struct {
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args,omitempty"`
	RawArgs *string         `json:"raw_args,omitempty"`
}

// Labels are what a case expects.
type Labels struct {
	// Calls label individual calls of the model.
	Calls []CallLabel `json:"calls,omitempty"`
	// Unacceptable lists the behaviours this case is built to provoke (its
	// misbehaving variants flag only these). Every behaviour the harness
	// detects is unacceptable in every case and flagged, listed or not.
	Unacceptable []Behaviour `json:"unacceptable,omitempty"`
	// Protocol lists the protocol mistakes the case provokes: its script
	// makes them on purpose. With the script (or a replay of it) the run
	// must make exactly these; another model may make these (the runtime
	// must answer each as the call layer must) and no other.
	Protocol []Mistake `json:"protocol,omitempty"`
	// Expect is the final result.
	Expect Expect `json:"expect"`
}

// CallLabel labels the Nth call (from 1; 0 means 1) the model makes of
// Tool ("" for a call without a tool name). Every field set is one check,
// counted in its layer: Call in the call layer; Execution, Attempts and
// First in the execution layer; Business in the business layer; Outcome
// and Code in the layer of the code (execution for a SUCCESS). Next lists
// the steps allowed right after the call. A label whose call the model
// never made counts as not exercised, in each of its layers.
type CallLabel struct {
	Tool      string                `json:"tool"`
	Nth       int                   `json:"nth,omitempty"`
	Outcome   *outcome.Outcome      `json:"outcome,omitempty"`
	Code      *errcode.Code         `json:"code,omitempty"`
	Call      *react.CallStatus     `json:"call,omitempty"`
	Execution *react.ExecStatus     `json:"execution,omitempty"`
	Business  *react.BusinessStatus `json:"business,omitempty"`
	Attempts  int                   `json:"attempts,omitempty"`
	First     *Verdict              `json:"first,omitempty"`
	Next      []Step                `json:"next,omitempty"`
	// ScriptOnly marks a label of a mistake the script makes on purpose
	// (a misspelt tool, malformed arguments): it is checked when the case
	// runs its script (or a replay of it, [Options].Replay) and counts as
	// not exercised with another model, which need not make the mistake.
	ScriptOnly bool `json:"script_only,omitempty"`
}

// Verdict is the outcome and code of an attempt.
type Verdict struct {
	Outcome outcome.Outcome `json:"outcome"`
	Code    errcode.Code    `json:"code,omitempty"`
}

// Expect is the expected end of a case (the final task).
type Expect struct {
	// Status is how the run must end: finished, failed or suspended.
	Status react.Status `json:"status"`
	// Goal, when set, is the goal status the run must have.
	Goal *react.GoalStatus `json:"goal,omitempty"`
	// Outputs are outputs that must be set to these values (compared
	// canonically).
	Outputs map[string]json.RawMessage `json:"outputs,omitempty"`
	// Facts are facts the tools gave that the final answer must carry
	// unchanged (the check of category 6).
	Facts []Fact `json:"facts,omitempty"`
	// Executions are the number of times given tools must have executed
	// (side effects).
	Executions map[string]int `json:"executions,omitempty"`
	// Derived are figures the answer may state that no tool gave as they
	// are, with how they derive from the tools' results (a count over two
	// pages, a sum): a claim equal to one is grounded.
	Derived []Derivation `json:"derived,omitempty"`
	// Incomplete, when set, says that the tools' results are partial (a
	// source unavailable, a page missing): the final answer must say so,
	// or it presents a partial result as complete.
	Incomplete *Incomplete `json:"incomplete,omitempty"`
}

// Derivation is how a figure derives from the results of Tool (every
// successful result the model was shown, in order): Op is "count" (the
// elements at Path: an array counts its elements, any other value one;
// "" is the result itself), "sum", "min" or "max" (of the numbers at
// Path). Path is dotted; arrays on the way are walked.
type Derivation struct {
	Op   string `json:"op"`
	Tool string `json:"tool"`
	Path string `json:"path,omitempty"`
}

// compute returns the figure over results, false when there is nothing to
// compute it from (no result, no number for sum, min or max).
func (d Derivation) compute(results []any) (float64, bool) {
	var path []string
	if d.Path != "" {
		path = strings.Split(d.Path, ".")
	}
	var nums []float64
	count := 0
	for _, r := range results {
		for _, v := range at(r, path) {
			if a, ok := v.([]any); ok {
				count += len(a)
				for _, e := range a {
					if f, ok := number(e); ok {
						nums = append(nums, f)
					}
				}
				continue
			}
			count++
			if f, ok := number(v); ok {
				nums = append(nums, f)
			}
		}
	}
	switch d.Op {
	case "count":
		return float64(count), len(results) > 0
	case "sum":
		sum := 0.0
		for _, f := range nums {
			sum += f
		}
		return sum, len(nums) > 0
	case "min", "max":
		if len(nums) == 0 {
			return 0, false
		}
		if d.Op == "min" {
			return slices.Min(nums), true
		}
		return slices.Max(nums), true
	}
	return 0, false
}

// number reads a JSON number decoded with UseNumber.
func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// Incomplete labels a partial result: What says what is missing (for the
// report); Marks are words of which the answer must use one to say so
// (default: partial, incomplete, only, not all, could not, unavailable,
// missing, unknown, and their like).
type Incomplete struct {
	What  string   `json:"what"`
	Marks []string `json:"marks,omitempty"`
}

// Fact is a value a tool returned. With Output set it must be that
// output's value (its text); otherwise it must appear in the summary or
// the failure reason as a whole word, not negated ("not cancelled" alters
// the fact cancelled) — or one of Same, words that state the same fact —
// and no word of Contrary may appear un-negated. With About (an entity: a
// warehouse, an order) the fact is looked for only in the clauses of the
// answer that name it: "A and B have stock; C has none" says nothing of C
// being unavailable, and "none" contradicts it. Name entities distinctly
// ("Munich", "order 7781"): About is matched as a whole word, so a single
// letter would also match the article "a".
type Fact struct {
	Value    string   `json:"value"`
	Output   string   `json:"output,omitempty"`
	About    string   `json:"about,omitempty"`
	Same     []string `json:"same,omitempty"`
	Contrary []string `json:"contrary,omitempty"`
}

// Variant is a misbehaving model for a case: its script replaces the
// case's; the harness must flag exactly Flags, and the runtime must still
// have protected the user as Protect says.
type Variant struct {
	Name      string      `json:"name"`
	Flags     []Behaviour `json:"flags"`
	Script    []Turn      `json:"script"`
	Decisions []Decision  `json:"decisions,omitempty"`
	Protect   Protection  `json:"protect"`
}

// Protection is what the runtime must have done for the user while a
// misbehaving model ran: how often each tool of the case executed (every
// tool is listed: a write the model called again must not run again), the
// statuses it gave the labelled calls (Next is not checked), and, when
// set, how the run ended and its no-progress count at the end.
type Protection struct {
	Executions map[string]int `json:"executions"`
	Calls      []CallLabel    `json:"calls,omitempty"`
	Status     *react.Status  `json:"status,omitempty"`
	Stalls     *int           `json:"stalls,omitempty"`
}

//go:embed cases/*.json
var builtin embed.FS

// Builtin returns the evaluation set that ships with the library (the
// files under eval/cases), sorted by category then id. It panics if the
// embedded files do not load, which the package's tests rule out.
func Builtin() []*Case {
	cs, err := Load(builtin, "cases")
	if err != nil {
		panic("eval: the built-in set does not load: " + err.Error())
	}
	return cs
}

// Load reads every *.json file under dir of fsys (recursively) as one
// case, checks it (see [Case.Check]) and returns the cases sorted by
// category then id. Unknown fields, a file holding more than one JSON
// value, a duplicate id and a case that fails its checks are errors naming
// the file.
func Load(fsys fs.FS, dir string) ([]*Case, error) {
	var cases []*Case
	seen := map[string]string{}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path.Ext(p) != ".json" {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		c, err := Parse(b)
		if err != nil {
			return fmt.Errorf("eval: %s: %w", p, err)
		}
		c.file = p
		if other, dup := seen[c.ID]; dup {
			return fmt.Errorf("eval: %s: case id %q is also used by %s", p, c.ID, other)
		}
		seen[c.ID] = p
		cases = append(cases, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("eval: no *.json case under %s", dir)
	}
	slices.SortFunc(cases, func(a, b *Case) int {
		if a.Category != b.Category {
			return int(a.Category) - int(b.Category)
		}
		return strings.Compare(a.ID, b.ID)
	})
	return cases, nil
}

// Parse decodes one case from JSON and checks it. It never panics,
// whatever b holds.
func Parse(b []byte) (*Case, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var c Case
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the case")
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Check reports what is wrong with a case: missing id, category, task or
// script; a tool without a name or responses, with an unknown effect,
// error kind, empty policy or verify status, or a schema that does not
// resolve; a decision that is not exactly one answer; a label that checks
// nothing or names an undefined status; an expected status a run cannot
// end with; a variant without a name or script, or flagging a behaviour
// the case does not list as unacceptable. The tools are also built, so a
// case that passes Check runs.
func (c *Case) Check() error {
	switch {
	case strings.TrimSpace(c.ID) == "":
		return errors.New("the case has no id")
	case !c.Category.IsValid():
		return fmt.Errorf("case %s: no category", c.ID)
	case strings.TrimSpace(c.Task) == "":
		return fmt.Errorf("case %s: no task", c.ID)
	case len(c.Script) == 0:
		return fmt.Errorf("case %s: no script", c.ID)
	}
	if _, err := c.catalog(); err != nil {
		return fmt.Errorf("case %s: %w", c.ID, err)
	}
	for i, d := range c.Decisions {
		if err := d.check(); err != nil {
			return fmt.Errorf("case %s: decision %d: %w", c.ID, i+1, err)
		}
	}
	for i, l := range c.Labels.Calls {
		if l.checks() == 0 && len(l.Next) == 0 {
			return fmt.Errorf("case %s: label %d (%s) checks nothing", c.ID, i+1, l.Tool)
		}
		if l.Nth < 0 {
			return fmt.Errorf("case %s: label %d: negative nth", c.ID, i+1)
		}
	}
	switch c.Labels.Expect.Status {
	case react.Finished, react.Failed, react.Suspended:
	default:
		return fmt.Errorf("case %s: expect.status must be finished, failed or suspended", c.ID)
	}
	for i, d := range c.Labels.Expect.Derived {
		switch d.Op {
		case "count", "sum", "min", "max":
		default:
			return fmt.Errorf("case %s: derived %d: op %q (want count, sum, min or max)", c.ID, i+1, d.Op)
		}
		if !slices.ContainsFunc(c.Tools, func(t ToolSpec) bool { return t.Name == d.Tool }) {
			return fmt.Errorf("case %s: derived %d: no tool %q", c.ID, i+1, d.Tool)
		}
	}
	for i, f := range c.Labels.Expect.Facts {
		if strings.TrimSpace(f.Value) == "" {
			return fmt.Errorf("case %s: fact %d has no value", c.ID, i+1)
		}
	}
	for i, v := range c.Variants {
		if strings.TrimSpace(v.Name) == "" || len(v.Script) == 0 {
			return fmt.Errorf("case %s: variant %d has no name or no script", c.ID, i+1)
		}
		for _, t := range c.Tools {
			if _, ok := v.Protect.Executions[t.Name]; !ok {
				return fmt.Errorf("case %s: variant %q: protect.executions does not say how often %s may execute", c.ID, v.Name, t.Name)
			}
		}
		for k := range v.Protect.Executions {
			if !slices.ContainsFunc(c.Tools, func(t ToolSpec) bool { return t.Name == k }) {
				return fmt.Errorf("case %s: variant %q: protect.executions names no tool of the case: %s", c.ID, v.Name, k)
			}
		}
		for k, l := range v.Protect.Calls {
			if l.checks() == 0 {
				return fmt.Errorf("case %s: variant %q: protect label %d (%s) checks nothing", c.ID, v.Name, k+1, l.Tool)
			}
		}
		for _, f := range v.Flags {
			if !slices.Contains(c.Labels.Unacceptable, f) {
				return fmt.Errorf("case %s: variant %q flags %s, which the case does not list as unacceptable", c.ID, v.Name, f)
			}
		}
		for k, d := range v.Decisions {
			if err := d.check(); err != nil {
				return fmt.Errorf("case %s: variant %q: decision %d: %w", c.ID, v.Name, k+1, err)
			}
		}
	}
	return nil
}

func (d Decision) check() error {
	n := 0
	if d.Approve {
		n++
	}
	if d.Decline != nil {
		n++
	}
	if d.Answer != "" {
		n++
	}
	if n != 1 {
		return errors.New("a decision is exactly one of approve, decline or answer")
	}
	return nil
}

// checks counts the status checks of a label.
func (l CallLabel) checks() int {
	n := 0
	for _, set := range []bool{l.Outcome != nil, l.Code != nil, l.Call != nil, l.Execution != nil, l.Business != nil, l.Attempts > 0, l.First != nil} {
		if set {
			n++
		}
	}
	return n
}

// nth returns the label's occurrence, from 1.
func (l CallLabel) nth() int { return max(l.Nth, 1) }

// node returns the node to run: the case's, with every case tool visible
// when it lists none, named after the case when it has no name.
func (c *Case) node() react.Node {
	n := c.Node
	if len(n.Tools) == 0 {
		for _, t := range c.Tools {
			n.Tools = append(n.Tools, t.Name)
		}
	}
	if n.Name == "" {
		n.Name = c.ID
	}
	return n
}

// String returns the case's id and title.
func (c *Case) String() string { return c.ID + " (" + c.Title + ")" }

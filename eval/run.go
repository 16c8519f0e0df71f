package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/runstore"
)

// Options configures [Run] and [Case.Run]. The zero value runs every case
// with its own scripted model, in English, without logging.
type Options struct {
	// Model returns the model for a case; nil means the case's script
	// ([Case.ScriptModel]). A real model sees the same node, tools and
	// user's words as the script was written for.
	Model func(c *Case) react.Model
	// Replay declares that Model replays each case's script (through a
	// real client and a recorded or proxied server, say), so the labels of
	// the script's deliberate mistakes (CallLabel.ScriptOnly) are checked
	// as for the scripted model. Without it they are not exercised when
	// Model is set.
	Replay bool
	// ModelName names the model in the report; "" means "scripted" when
	// Model is nil, else "model".
	ModelName string
	// Lang is the language of every text the model sees.
	Lang prompt.Lang
	// Logger receives the loop's events of every run; nil discards them.
	Logger *slog.Logger
	// Metrics, when set, also receives every run's events and one
	// RecordTask per case (the final task's verdict); the report then
	// shows its figures. Nil means [Run] uses a Metrics of its own.
	Metrics *react.Metrics
	// Timeout bounds each case; 0 means no bound beyond ctx.
	Timeout time.Duration
	// ResumeRun makes every run keep its stopped state in a run store
	// (runstore.Memory) and resume with [react.Loop.ResumeRun] instead of
	// [react.Loop.Resume] with the snapshot.
	ResumeRun bool
	// Variants makes [Run] also run every misbehaving variant of the
	// cases, through Resume and through ResumeRun, and check that each is
	// flagged exactly and that the runtime still protected the user
	// ([Report].Variants). Variants are scripts: they run whatever Model
	// is, and their runs are not in the report's metrics.
	Variants bool
	// Judge, when set, reviews the final answer of every case against the
	// evidence with a rubric (the open claims code cannot check); its
	// verdicts are reported apart ([CaseResult].Judge, [Report].Judge) and
	// never change a deterministic check. Nil (the default) runs no judge.
	Judge Judge
	// Rubric is the judge's rubric; "" means [DefaultRubric].
	Rubric string
}

// ScriptModel returns a model that replays the case's script, turn by
// turn; past its end it fails (reacttest.ErrScriptExhausted).
func (c *Case) ScriptModel() react.Model { return scriptModel(c.Script) }

func scriptModel(turns []Turn) react.Model {
	resp := make([]react.Response, len(turns))
	for i, t := range turns {
		r := react.Response{Text: t.Text}
		for _, cs := range t.Calls {
			args := cs.Args
			if cs.RawArgs != nil {
				args = json.RawMessage(*cs.RawArgs)
			}
			r.ToolCalls = append(r.ToolCalls, react.ToolCall{ID: cs.ID, Name: cs.Name, Args: args})
		}
		resp[i] = r
	}
	return reacttest.Script(resp...)
}

// Variant returns a copy of c whose script and (when the variant has
// them) decisions are the variant's: the misbehaving model.
func (c *Case) Variant(v Variant) *Case {
	cp := *c
	cp.Script = v.Script
	if len(v.Decisions) > 0 {
		cp.Decisions = v.Decisions
	}
	cp.Variants = nil
	return &cp
}

// run is what one run of a case produced, for scoring.
type run struct {
	runID    string
	res      react.Result
	err      error
	fakes    *fakes
	declined []refusal // approvals the user declined
	answers  []string  // the user's answers to follow-ups
}

// refusal is a tool the agent must not call again: a write whose approval
// the user declined, or a tool that refused permission, and the index of
// the model turn where that happened.
type refusal struct {
	tool string
	turn int
}

// Run runs the case once with model (nil: its script) and scores it. An
// error is returned only when the case cannot run (ctx cancelled before it
// started); a model or run failure is part of the result (its Error and a
// failed final task).
func (c *Case) Run(ctx context.Context, model react.Model, opts Options) (CaseResult, error) {
	if err := ctx.Err(); err != nil {
		return CaseResult{}, err
	}
	scripted := model == nil || opts.Replay
	if model == nil {
		model = c.ScriptModel()
	}
	r := c.execute(ctx, model, opts)
	cr := c.score(r, scripted)
	if opts.Metrics != nil {
		opts.Metrics.RecordTask(cr.Final.Passed)
	}
	if opts.Judge != nil {
		cr.Judge = c.review(ctx, opts.Judge, opts.Rubric, r)
	}
	return cr, nil
}

// VariantResult is the run of one misbehaving variant: the behaviours it
// had to be flagged with and was, and what the runtime did for the user
// (Protect). Passed when the flags are exactly Want, Protect passed, and
// the run did not pass end to end.
type VariantResult struct {
	Case    string      `json:"case"`
	Variant string      `json:"variant"`
	Via     string      `json:"via"` // "resume" (the snapshot) or "resume_run" (the run store)
	Want    []Behaviour `json:"want"`
	Flagged []Behaviour `json:"flagged"`
	Protect Score       `json:"protect"`
	Passed  bool        `json:"passed"`
	// Failures say what differed.
	Failures []string `json:"failures,omitempty"`
	// Answer and Executions are the run's, for the report.
	Answer     string         `json:"answer,omitempty"`
	Executions map[string]int `json:"executions"`
}

// RunVariant runs the variant v of c (its script, its decisions) once
// through Resume and once through ResumeRun, and scores each: the flags
// must be exactly v.Flags, and the runtime must have protected the user as
// v.Protect says. opts.Model, Metrics and Judge are not used.
func (c *Case) RunVariant(ctx context.Context, v Variant, opts Options) ([]VariantResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	vc := c.Variant(v)
	var out []VariantResult
	for _, viaStore := range []bool{false, true} {
		o := opts
		o.ResumeRun, o.Metrics, o.Judge = viaStore, nil, nil
		r := vc.execute(ctx, vc.ScriptModel(), o)
		cr := vc.score(r, true)
		vr := VariantResult{Case: c.ID, Variant: v.Name, Via: "resume", Want: slices.Clone(v.Flags), Flagged: cr.Flagged,
			Protect: v.protect(r), Answer: cr.Answer, Executions: cr.Executions}
		if viaStore {
			vr.Via = "resume_run"
		}
		if vr.Want == nil {
			vr.Want = []Behaviour{}
		}
		if !sameBehaviours(vr.Want, vr.Flagged) {
			vr.Failures = append(vr.Failures, fmt.Sprintf("flagged %v, want exactly %v", vr.Flagged, vr.Want))
		}
		for _, f := range vr.Protect.Failures {
			vr.Failures = append(vr.Failures, "the runtime did not protect the user: "+f)
		}
		if cr.EndToEnd {
			vr.Failures = append(vr.Failures, "the misbehaving run passed end to end")
		}
		if r.err != nil && !errors.Is(r.err, reacttest.ErrScriptExhausted) {
			vr.Failures = append(vr.Failures, "the run failed: "+r.err.Error())
		}
		vr.Passed = len(vr.Failures) == 0
		out = append(out, vr)
	}
	return out, nil
}

// sameBehaviours reports whether a and b hold the same behaviours.
func sameBehaviours(a, b []Behaviour) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

// execute runs the case: Run, then Resume with the case's decisions while
// the run suspends and a decision of the right kind is left.
func (c *Case) execute(ctx context.Context, model react.Model, opts Options) *run {
	out := &run{}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	out.runID = "eval-" + c.ID
	f, err := c.catalog()
	if err != nil { // Check rules this out for loaded cases
		out.err = err
		return out
	}
	out.fakes = f
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	observer := react.Observer(react.NewLogObserver(logger))
	if opts.Metrics != nil {
		observer = react.Observers(observer, opts.Metrics)
	}
	var clock fixedClock
	guards := &guard.Options{Retry: guard.RetryOptions{Sleep: noSleep}, Now: guardNow}
	cfg := react.Config{
		Model:        model,
		Tools:        f.catalog,
		Lang:         opts.Lang,
		Guards:       guards,
		Observer:     observer,
		Logger:       logger,
		NewRunID:     func(context.Context) string { return out.runID },
		Now:          clock.now,
		KeepRunState: true,
	}
	if opts.ResumeRun {
		cfg.Runs = runstore.NewMemory()
	}
	loop, err := react.New(cfg)
	if err != nil {
		out.err = err
		return out
	}
	var approvals, answers []Decision
	for _, d := range c.Decisions {
		if d.Answer != "" {
			answers = append(answers, d)
		} else {
			approvals = append(approvals, d)
		}
	}
	res, err := loop.Run(ctx, c.node(), c.Task)
	for err == nil && res.Status == react.Suspended {
		var d react.Decision
		switch res.Suspension.Kind {
		case react.SuspendApproval:
			if len(approvals) == 0 {
				break
			}
			a := approvals[0]
			approvals = approvals[1:]
			if a.Approve {
				d = react.Approve(res.Suspension.Ticket)
			} else {
				d = react.Decline(res.Suspension.Ticket, *a.Decline)
				out.declined = append(out.declined, refusal{tool: res.Suspension.Approval.Tool, turn: turns(res.Transcript) - 1})
			}
		case react.SuspendFollowUp:
			if len(answers) == 0 {
				break
			}
			d = react.Answer(res.Suspension.Ticket, answers[0].Answer)
			out.answers = append(out.answers, answers[0].Answer)
			answers = answers[1:]
		}
		if d == (react.Decision{}) {
			break // no decision left: the run ends suspended
		}
		var next react.Result
		if opts.ResumeRun {
			next, err = loop.ResumeRun(ctx, res.Run, d)
		} else {
			next, err = loop.Resume(ctx, res.Snapshot, d)
		}
		if err != nil && errors.Is(err, react.ErrDecision) {
			break
		}
		res = next
	}
	out.res, out.err = res, err
	return out
}

// turns counts the assistant messages of a transcript.
func turns(ms []react.Message) int {
	n := 0
	for _, m := range ms {
		if m.Role == react.RoleAssistant {
			n++
		}
	}
	return n
}

func noSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// Epoch is the time the guards of an evaluation run read (the fetch time
// of results whose contract names none, the "now" a result's age is
// measured at), so that reports are deterministic: a case dates its
// results relative to it.
var Epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func guardNow() time.Time { return Epoch }

// fixedClock advances one millisecond per reading, so durations in events
// are deterministic.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// Run runs every case in order and returns the report. A nil
// opts.Metrics gets a Metrics of the run's own, whose figures the report
// shows. Only ctx's error stops it early (returned with the report of the
// cases run so far).
func Run(ctx context.Context, cases []*Case, opts Options) (*Report, error) {
	if opts.Metrics == nil {
		opts.Metrics = &react.Metrics{}
	}
	name := opts.ModelName
	if name == "" {
		name = "scripted"
		if opts.Model != nil {
			name = "model"
		}
	}
	rep := &Report{Model: name, Judged: opts.Judge != nil}
	for _, c := range cases {
		var m react.Model
		if opts.Model != nil {
			m = opts.Model(c)
		}
		cr, err := c.Run(ctx, m, opts)
		if err != nil {
			rep.finish(opts.Metrics)
			return rep, fmt.Errorf("eval: case %s: %w", c.ID, err)
		}
		rep.Cases = append(rep.Cases, cr)
	}
	if opts.Variants {
		rep.Variants = []VariantResult{}
		for _, c := range cases {
			for _, v := range c.Variants {
				vrs, err := c.RunVariant(ctx, v, opts)
				if err != nil {
					rep.finish(opts.Metrics)
					return rep, fmt.Errorf("eval: case %s, variant %q: %w", c.ID, v.Name, err)
				}
				rep.Variants = append(rep.Variants, vrs...)
			}
		}
	}
	rep.finish(opts.Metrics)
	return rep, nil
}

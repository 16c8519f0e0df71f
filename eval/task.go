package eval

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/task"
)

// TaskCase is a labelled task of several steps (package task): the user's
// words, the tools, the graph of steps with its acceptance rule, a
// scripted model per step, the decisions that answer its suspensions, and
// what must come out: each step's status, the task's status, what is
// missing, the answers refused, the side effects. It is read from a JSON
// file under eval/tasks ([LoadTasks]); field names are stable API.
type TaskCase struct {
	// ID identifies the case; it starts with "task-".
	ID string `json:"id"`
	// Title says in one line what the case checks.
	Title string `json:"title"`
	// Task is the user's words.
	Task string `json:"task"`
	// Tools are the case's fake tools (as in [Case]).
	Tools []ToolSpec `json:"tools"`
	// Steps are the task's steps; Final its final step (optional).
	Steps []TaskStep `json:"steps"`
	Final *TaskStep  `json:"final,omitempty"`
	// MaxSteps bounds the step runs (0: the task's default).
	MaxSteps int `json:"max_steps,omitempty"`
	// Acceptance is the task's rule of success.
	Acceptance task.Acceptance `json:"acceptance"`
	// Script holds each step's turns, by step name, for the scripted
	// model: each request is answered by the next turn of the step whose
	// instructions open the system message.
	Script map[string][]Turn `json:"script"`
	// Decisions answer the task's suspensions in order.
	Decisions []Decision `json:"decisions,omitempty"`
	// ResumeElsewhere resumes every suspension with a new loop and runner,
	// as another process sharing the stores and the snapshot key would.
	ResumeElsewhere bool `json:"resume_elsewhere,omitempty"`
	// Expect is what must come out.
	Expect TaskExpect `json:"expect"`
}

// TaskStep is one step of a [TaskCase].
type TaskStep struct {
	Name string     `json:"name"`
	Node react.Node `json:"node"`
	// Next are the step's edges: to a step, when the step ended with one
	// of Status (any status when empty).
	Next []TaskEdge `json:"next,omitempty"`
}

// TaskEdge leads to step To when the step's status is one of Status.
type TaskEdge struct {
	To     string             `json:"to"`
	Status []react.StepStatus `json:"status,omitempty"`
}

// TaskExpect is the expected end of a task case.
type TaskExpect struct {
	// Status is the task's status.
	Status task.Status `json:"status"`
	// Steps are the step runs in order with their statuses.
	Steps []StepExpect `json:"steps,omitempty"`
	// Missing are the missing items, in order.
	Missing []string `json:"missing,omitempty"`
	// Continue, when set, is whether continuing could complete a missing
	// item ([task.Result].Continue).
	Continue *bool `json:"continue,omitempty"`
	// Refused are the codes of the refusals the final answer got, in order.
	Refused []errcode.Code `json:"refused,omitempty"`
	// Suspensions is the number of times the task stopped for a person.
	Suspensions int `json:"suspensions,omitempty"`
	// Executions are the times given tools must have executed.
	Executions map[string]int `json:"executions,omitempty"`
}

// StepExpect is one step run and its status.
type StepExpect struct {
	Step   string           `json:"step"`
	Status react.StepStatus `json:"status"`
}

//go:embed tasks/*.json
var builtinTasks embed.FS

// BuiltinTasks returns the task cases that ship with the library (the files
// under eval/tasks), sorted by id. It panics if they do not load, which the
// package's tests rule out.
func BuiltinTasks() []*TaskCase {
	cs, err := LoadTasks(builtinTasks, "tasks")
	if err != nil {
		panic("eval: the built-in task cases do not load: " + err.Error())
	}
	return cs
}

// LoadTasks reads every *.json file under dir of fsys as one task case and
// checks it (unknown fields, a task that [task.New] refuses, a step
// without a script are errors naming the file).
func LoadTasks(fsys fs.FS, dir string) ([]*TaskCase, error) {
	var out []*TaskCase
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".json" {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var c TaskCase
		if err := dec.Decode(&c); err != nil {
			return fmt.Errorf("eval: %s: %w", p, err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return fmt.Errorf("eval: %s: data after the case", p)
		}
		if err := c.check(); err != nil {
			return fmt.Errorf("eval: %s: %w", p, err)
		}
		out = append(out, &c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (c *TaskCase) check() error {
	if !strings.HasPrefix(c.ID, "task-") || strings.TrimSpace(c.Task) == "" || !c.Expect.Status.Ended() && c.Expect.Status != task.Suspended {
		return errors.New("a task case needs an id starting with task-, a task and an expected status")
	}
	if len(c.Script) == 0 {
		return errors.New("no script")
	}
	for name := range c.Script {
		if c.instructions(name) == "" {
			return fmt.Errorf("the script names %q, which is no step with instructions", name)
		}
	}
	for i, d := range c.Decisions {
		if err := d.check(); err != nil {
			return fmt.Errorf("decision %d: %w", i+1, err)
		}
	}
	f, err := (&Case{Tools: c.Tools}).catalog()
	if err != nil {
		return err
	}
	_, err = task.New(c.loop(f, &guard.Options{}, nil), c.definition(), nil)
	return err
}

func (c *TaskCase) steps() []TaskStep {
	if c.Final == nil {
		return c.Steps
	}
	return append(slices.Clip(c.Steps), *c.Final)
}

// definition is the case's task.
func (c *TaskCase) definition() task.Task {
	t := task.Task{Name: c.ID, MaxSteps: c.MaxSteps, Acceptance: c.Acceptance}
	for _, s := range c.Steps {
		st := task.Step{Name: s.Name, Node: s.Node}
		for _, e := range s.Next {
			e := e
			edge := task.Edge{To: e.To}
			if len(e.Status) > 0 {
				edge.When = task.OnStatus(e.Status...)
			}
			st.Next = append(st.Next, edge)
		}
		t.Steps = append(t.Steps, st)
	}
	if c.Final != nil {
		t.Final = &task.Step{Name: c.Final.Name, Node: c.Final.Node}
	}
	return t
}

// taskKey seals the snapshots of task cases, so that a resume "elsewhere"
// (a new loop) opens them.
var taskKey = []byte("reactguard eval: the task cases key")

// loop is a loop over the case's fakes with the stores of guards.
func (c *TaskCase) loop(f *fakes, guards *guard.Options, model react.Model) *react.Loop {
	if model == nil {
		model = react.ModelFunc(func(context.Context, react.Request) (react.Response, error) {
			return react.Response{}, errors.New("no model")
		})
	}
	guards.Now = guardNow
	l, err := react.New(react.Config{Model: model, Tools: f.catalog, Guards: guards, Observer: react.DiscardObserver,
		SnapshotKeys: [][]byte{taskKey}, KeepRunState: true})
	if err != nil {
		panic("eval: " + err.Error()) // unreachable: the config is fixed
	}
	return l
}

// stepModel is the scripted model of a task case: it answers each request
// with the next turn of the step whose instructions open the system
// message.
type stepModel struct {
	c     *TaskCase
	turns map[string][]Turn
}

// Generate implements react.Model.
func (m *stepModel) Generate(_ context.Context, req react.Request) (react.Response, error) {
	sys := ""
	if len(req.Messages) > 0 {
		sys = req.Messages[0].Content
	}
	best := ""
	for _, s := range m.c.steps() {
		if ins := strings.TrimSpace(s.Node.Instructions); ins != "" && strings.HasPrefix(sys, ins) && len(ins) > len(m.c.instructions(best)) {
			best = s.Name
		}
	}
	q := m.turns[best]
	if best == "" || len(q) == 0 {
		return react.Response{}, fmt.Errorf("eval: task %s: no scripted turn left for step %q", m.c.ID, best)
	}
	m.turns[best] = q[1:]
	return q[0].response(), nil
}

func (c *TaskCase) instructions(step string) string {
	for _, s := range c.steps() {
		if s.Name == step {
			return strings.TrimSpace(s.Node.Instructions)
		}
	}
	return ""
}

// TaskResult is how one task case went.
type TaskResult struct {
	ID     string      `json:"id"`
	Passed bool        `json:"passed"`
	Status task.Status `json:"status,omitempty"`
	// Diffs say what differed from the case's expectations.
	Diffs []string `json:"diffs,omitempty"`
	// Error is a run that could not go on.
	Error string `json:"error,omitempty"`
}

// RunTask runs the case with model (nil: its scripted model) and checks
// what came out.
func (c *TaskCase) RunTask(ctx context.Context, model react.Model) TaskResult {
	out := TaskResult{ID: c.ID}
	f, err := (&Case{Tools: c.Tools}).catalog()
	if err != nil {
		out.Error = err.Error()
		return out
	}
	if model == nil {
		turns := map[string][]Turn{}
		for k, v := range c.Script {
			turns[k] = slices.Clone(v)
		}
		model = &stepModel{c: c, turns: turns}
	}
	// The stores a service shares between its processes.
	guards := &guard.Options{Retry: guard.RetryOptions{Sleep: noSleep},
		Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()}
	runner, _ := task.New(c.loop(f, guards, model), c.definition(), nil) // check ruled out an error
	res, err := runner.Run(ctx, c.Task)
	suspensions := 0
	decisions := slices.Clone(c.Decisions)
	for err == nil && res.Status == task.Suspended && len(decisions) > 0 {
		suspensions++
		d := decisions[0]
		decisions = decisions[1:]
		if c.ResumeElsewhere { // another process: a new loop and runner on the same stores and key
			runner, _ = task.New(c.loop(f, guards, model), c.definition(), nil)
		}
		res, err = runner.Resume(ctx, res.Snapshot, d.decision(res.Suspension.Ticket))
	}
	if err == nil && res.Status == task.Suspended {
		suspensions++
	}
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.Status = res.Status
	diff := func(format string, args ...any) { out.Diffs = append(out.Diffs, fmt.Sprintf(format, args...)) }
	e := c.Expect
	if res.Status != e.Status {
		diff("status %s, want %s", res.Status, e.Status)
	}
	if e.Steps != nil {
		var got []StepExpect
		for _, s := range res.Steps {
			got = append(got, StepExpect{Step: s.Step, Status: s.Status})
		}
		if !slices.Equal(got, e.Steps) {
			diff("steps %v, want %v", got, e.Steps)
		}
	}
	var missing []string
	for _, m := range res.Missing {
		missing = append(missing, m.Item)
	}
	if !slices.Equal(missing, e.Missing) {
		diff("missing %q, want %q", missing, e.Missing)
	}
	if e.Continue != nil && res.Continue != *e.Continue {
		diff("continue %v, want %v", res.Continue, *e.Continue)
	}
	var refused []errcode.Code
	if n := len(res.Steps); n > 0 && c.Final != nil && res.Steps[n-1].Step == c.Final.Name {
		for _, r := range res.Steps[n-1].Calls {
			if r.Tool == react.ToolFinish && r.Code != 0 {
				refused = append(refused, r.Code)
			}
		}
	}
	if !slices.Equal(refused, e.Refused) {
		diff("answers refused with %v, want %v", refused, e.Refused)
	}
	if e.Suspensions != 0 && suspensions != e.Suspensions {
		diff("%d suspensions, want %d", suspensions, e.Suspensions)
	}
	for name, n := range e.Executions {
		if got := f.executions(name); got != n {
			diff("%s executed %d times, want %d", name, got, n)
		}
	}
	out.Passed = len(out.Diffs) == 0
	return out
}

// decision is d for the suspension of ticket.
func (d Decision) decision(ticket string) react.Decision {
	switch {
	case d.Approve:
		return react.Approve(ticket)
	case d.Decline != nil:
		return react.Decline(ticket, *d.Decline)
	}
	return react.Answer(ticket, d.Answer)
}

// RunTasks runs every task case with model (nil: the scripted ones) and
// returns their results in order.
func RunTasks(ctx context.Context, cases []*TaskCase, model react.Model) []TaskResult {
	out := make([]TaskResult, 0, len(cases))
	for _, c := range cases {
		if ctx.Err() != nil {
			break
		}
		tctx, cancel := context.WithTimeout(ctx, time.Minute)
		out = append(out, c.RunTask(tctx, model))
		cancel()
	}
	return out
}

// WriteTasksMarkdown writes the task cases' results as a Markdown section.
func WriteTasksMarkdown(w io.Writer, results []TaskResult) error {
	passed := 0
	for _, r := range results {
		if r.Passed {
			passed++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Tasks of several steps\n\n%d/%d task cases passed.\n\n| case | status | passed |\n|---|---|---|\n", passed, len(results))
	for _, r := range results {
		status := r.Status.String()
		if r.Error != "" {
			status = "error"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %v |\n", r.ID, status, r.Passed)
	}
	for _, r := range results {
		for _, d := range r.Diffs {
			fmt.Fprintf(&b, "\n- `%s`: %s", r.ID, d)
		}
		if r.Error != "" {
			fmt.Fprintf(&b, "\n- `%s`: error: %s", r.ID, r.Error)
		}
	}
	_, err := io.WriteString(w, b.String()+"\n")
	return err
}

// response is the turn as a model response.
func (t Turn) response() react.Response {
	r := react.Response{Text: t.Text}
	for _, cs := range t.Calls {
		args := cs.Args
		if cs.RawArgs != nil {
			args = json.RawMessage(*cs.RawArgs)
		}
		r.ToolCalls = append(r.ToolCalls, react.ToolCall{ID: cs.ID, Name: cs.Name, Args: args})
	}
	return r
}

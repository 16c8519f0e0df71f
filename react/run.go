package react

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/internal/grow"
	"github.com/reactguard/reactguard/internal/printkey"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// run is the state of one run. It is used by one goroutine at a time (the
// parallel reads of a wave touch only their own slots).
type run struct {
	l        *Loop
	cat      *prompt.Catalog
	observer Observer
	wants    EventSet // the kinds observer receives
	sink     *sink    // the host's stream; nil when the run is not streamed

	id          string
	owner       Owner
	ticket      string // the ticket of the suspension last sealed
	node        Node
	round       int
	stalls      int
	noCalls     int    // the stalls of the current streak counted for rounds without a tool call
	status      Status // 0 while running
	failure     *Failure
	summary     string
	msgs        []Message // msgs[0] is the system slot of the current round
	wave        *wave     // the turn whose calls are being processed (&w); nil between turns
	roundOpen   bool      // a turn was received whose EventRoundEnd was not reported
	w           wave
	outputs     map[string]OutputValue // nil until the first output
	susp        *Suspension
	answers     []qa
	answered    map[string]string // normalized question → answer; nil until the first
	userTexts   []string
	writeFailed bool
	ids         map[string]struct{} // every call id of the run
	sys         string              // the system prompt, built for sysFor-1 outputs
	sysFor      int
	calls       []CallReport     // every processed call, in order (layers.go)
	evidenced   printkey.Digests // per fingerprint, the digest of its last result since the last write
	cur         callResult       // the result of the call being dispatched alone
	msgsHint    int              // the plan's msgs and calls hints, for grow.AppendHint
	callsHint   int
	thread      *threadRun             // the thread whose message the run answers; nil outside a thread
	typed       map[string]typedOutput // the outputs declared with a schema; nil when none

	// A run as a step of a task (step.go).
	verifier Verifier     // WithVerifier; nil: none
	inputs   *Inputs      // WithInputs: what the system message shows
	check    *StepVerdict // the verifier's latest verdict
	verified bool         // the verifier found the step satisfied at the finish
	verr     error        // a verifier's failure after a call, returned by processWave
	host     *wireHost    // WithHostState

	// Derived from the node and the catalog (the plan's, read-only).
	plan      *plan
	visible   map[string]*tool.Tool // visible catalog tools
	offered   []string              // every visible tool name, for NEXT_CATALOG
	specs     []ToolSpec
	versions  map[string]string // schema version of each visible tool
	required  []string
	seesWrite bool
}

// qa is a follow-up question and the user's answer.
type qa struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// wave is the turn whose calls are being processed.
type wave struct {
	msg     int             // index in msgs of the assistant message
	next    int             // the next call to process
	invalid map[int]problem // malformed calls, by index
}

// problem is what is wrong with a malformed call.
type problem struct {
	Kind   string `json:"kind"`             // no_id, id_repeated, no_name, ..., cut_off
	ID     string `json:"id,omitempty"`     // the repeated id (id_repeated)
	Reason string `json:"reason,omitempty"` // the turn's finish reason (cut_off)
}

const (
	problemNoID        = "no_id"
	problemIDRepeated  = "id_repeated"
	problemNoName      = "no_name"
	problemIDTooLong   = "id_too_long"
	problemNameTooLong = "name_too_long"
	problemCutOff      = "cut_off" // the turn ended at the output limit (CutOff)
)

// MaxCallID and MaxToolName bound, in bytes, the call id and the tool name
// of a model's tool call: a call past either is answered REJECTED
// TOOL_CALL_INVALID without running, so that no id a store must index
// (approvals, evidence) can be longer than every store accepts. The call
// keeps its id in the transcript, paired with its tool message.
const (
	MaxCallID   = 256
	MaxToolName = 256
)

// newRun prepares a run of node.
func (l *Loop) newRun(id string, node Node) (*run, error) {
	if err := node.validate(func(name string) bool { _, ok := l.catalog.Lookup(name); return ok }); err != nil {
		return nil, err
	}
	if err := node.checkRequire(l.catalog.Lookup); err != nil {
		return nil, err
	}
	p, err := l.planOf(node)
	if err != nil {
		return nil, err
	}
	typed, err := l.resolveOutputs(node)
	if err != nil {
		return nil, err
	}
	r := &run{
		l:         l,
		cat:       l.cat,
		observer:  l.observer,
		wants:     l.wants,
		id:        id,
		node:      node,
		msgs:      make([]Message, 1, max(4, min(p.msgs.Load(), startSliceHint))),
		calls:     make([]CallReport, 0, min(p.calls.Load(), startSliceHint)),
		msgsHint:  int(p.msgs.Load()),
		callsHint: int(p.calls.Load()),
		ids:       make(map[string]struct{}, p.ids.Load()),
		evidenced: printkey.NewDigests(int(p.evidenced.Load())),
		plan:      p,
		required:  node.required(),
		visible:   p.visible,
		offered:   p.offered,
		specs:     p.specs,
		versions:  p.versions,
		seesWrite: p.seesWrite,
		typed:     typed,
	}
	return r, nil
}

// setOutput sets output key to v.
func (r *run) setOutput(key string, v OutputValue) {
	if r.outputs == nil {
		r.outputs = make(map[string]OutputValue)
	}
	r.outputs[key] = v
}

// setAnswered records the user's answer to question.
func (r *run) setAnswered(question, answer string) {
	if r.answered == nil {
		r.answered = make(map[string]string)
	}
	r.answered[normalize(question)] = answer
}

// plan is what a run derives from its node's tools and the catalog. It is
// read-only once built and shared by the runs of nodes with the same tools
// (and the same need of builtin_output_set): a service runs one node, or a
// few, many times.
type plan struct {
	tools     []string // the node's Tools, copied
	outputs   bool     // the node declares outputs (builtin_output_set is offered)
	visible   map[string]*tool.Tool
	offered   []string // every visible tool name, for NEXT_CATALOG
	specs     []ToolSpec
	versions  map[string]string // schema version of each visible tool
	seesWrite bool
	// ids and evidenced are the sizes the last run of the plan reached
	// (its call ids, its fingerprints of new evidence), at most maxHint:
	// the next run makes those sets that large, so that runs alike do not
	// grow them step by step (each step re-hashes every key). msgs and
	// calls are the lengths of its transcript and call reports, at most
	// maxSliceHint: the next run starts them with that much room up to
	// startSliceHint, and grows them to that length at once when they
	// pass it (grow.AppendHint).
	ids, evidenced, msgs, calls atomic.Int32
}

// maxHint and maxSliceHint bound the size hints, and so what a run that
// follows a longer one allocates for nothing; past them, sets and slices
// grow by doubling. A run starts its slices with room for at most
// startSliceHint elements, so a short run that follows a long one wastes
// at most about 60 KB for the two; only a run that passes 256 messages
// (or call reports) is given the previous run's length, at most 8,192
// elements (768 KB of messages, 960 KB of reports).
const (
	maxHint        = 4096
	maxSliceHint   = 8192
	startSliceHint = 256
)

// keepSizes records the sizes r reached for the next run of its plan.
func (r *run) keepSizes() {
	r.plan.ids.Store(int32(min(len(r.ids), maxHint)))
	r.plan.evidenced.Store(int32(min(r.evidenced.Len(), maxHint)))
	r.plan.msgs.Store(int32(min(len(r.msgs), maxSliceHint)))
	r.plan.calls.Store(int32(min(len(r.calls), maxSliceHint)))
}

// planOf returns the plan of node, the last one built when node has the
// same tools and the catalog still holds the same tool values under their
// names, else a new one, which it keeps for the next run.
func (l *Loop) planOf(node Node) (*plan, error) {
	outputs := len(node.Outputs) > 0
	if p := l.plan.Load(); p != nil && p.outputs == outputs && slices.Equal(p.tools, node.Tools) && l.holds(p) {
		return p, nil
	}
	builtins := l.builtinSpecs[0]
	if outputs {
		builtins = l.builtinSpecs[1]
	}
	p := &plan{
		tools:    slices.Clone(node.Tools),
		outputs:  outputs,
		visible:  make(map[string]*tool.Tool, len(node.Tools)),
		versions: make(map[string]string, len(node.Tools)),
		specs:    make([]ToolSpec, 0, len(node.Tools)+len(builtins)),
		offered:  make([]string, 0, len(node.Tools)+len(builtins)),
	}
	for _, name := range node.Tools {
		t, _ := l.catalog.Lookup(name)
		p.visible[name] = t
		p.offered = append(p.offered, name)
		if t.Effect.IsWrite() {
			p.seesWrite = true
		}
		schema, err := l.schemaOf(t)
		if err != nil {
			return nil, fmt.Errorf("%w %q: schema of %s: %w", ErrInvalidNode, node.Name, name, err)
		}
		p.specs = append(p.specs, ToolSpec{Name: name, Description: t.Description, InputSchema: schema})
		if e, ok := l.schemas.Load(t); ok {
			p.versions[name] = e.(schemaEntry).version
		}
	}
	for _, s := range builtins {
		p.specs = append(p.specs, s)
		p.offered = append(p.offered, s.Name)
	}
	l.plan.Store(p)
	return p, nil
}

// holds reports whether the catalog holds p's tools under their names (a
// name freed by a failed Catalog.Add may be taken by another tool).
func (l *Loop) holds(p *plan) bool {
	for name, t := range p.visible {
		if now, _ := l.catalog.Lookup(name); now != t {
			return false
		}
	}
	return true
}

// schemaOf returns the JSON of t's input schema, encoded (and its version
// computed, see schemaEntry) once per tool: a tool must not change after
// it was added to a catalog.
func (l *Loop) schemaOf(t *tool.Tool) (json.RawMessage, error) {
	if e, ok := l.schemas.Load(t); ok {
		return e.(schemaEntry).schema, nil
	}
	if t.InputSchema == nil {
		return nil, nil
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, err
	}
	l.schemas.Store(t, newSchemaEntry(b))
	return b, nil
}

// appendAssistant records the model's turn and opens a wave for its calls.
// Malformed calls are repaired so that the history stays pairable (a
// missing or repeated id is replaced by a generated one) and remembered,
// to be answered TOOL_CALL_INVALID in their turn.
func (r *run) appendAssistant(resp Response) {
	m := Message{Role: RoleAssistant, Content: validText(resp.Text)}
	var invalid map[int]problem
	var args []byte // the calls' arguments, copied into one buffer
	cut := len(resp.ToolCalls) > 0 && CutOff(resp.FinishReason)
	if len(resp.ToolCalls) > 0 {
		m.ToolCalls = make([]ToolCall, len(resp.ToolCalls))
		n := 0
		for _, c := range resp.ToolCalls {
			n += len(c.Args)
		}
		args = make([]byte, 0, n)
	}
	for i, c := range resp.ToolCalls {
		// Text is made valid UTF-8 before the repeated-id check, so two ids
		// that differ only in invalid bytes count as one repeated id here,
		// not after a resume.
		c.ID, c.Name = validText(c.ID), validText(c.Name)
		c.Args, args = validJSONText(c.Args, args)
		var p problem
		seen := false
		if c.ID != "" {
			n := len(r.ids)
			r.ids[c.ID] = struct{}{}
			seen = len(r.ids) == n
		}
		switch {
		case c.ID == "":
			p = problem{Kind: problemNoID}
			c.ID = r.genID(i)
			r.ids[c.ID] = struct{}{}
		case seen:
			p = problem{Kind: problemIDRepeated, ID: c.ID}
			c.ID = r.genID(i)
			r.ids[c.ID] = struct{}{}
		case len(c.ID) > MaxCallID:
			p = problem{Kind: problemIDTooLong}
		case strings.TrimSpace(c.Name) == "":
			p = problem{Kind: problemNoName}
		case len(c.Name) > MaxToolName:
			p = problem{Kind: problemNameTooLong}
		case cut:
			p = problem{Kind: problemCutOff, Reason: resp.FinishReason}
		}
		if p.Kind != "" {
			if invalid == nil {
				invalid = make(map[int]problem)
			}
			invalid[i] = p
		}
		m.ToolCalls[i] = c
	}
	m.Parts = keptParts(resp.Parts, len(m.ToolCalls))
	r.appendMsg(m)
	r.roundOpen = true
	if len(m.ToolCalls) > 0 {
		r.w = wave{msg: len(r.msgs) - 1, invalid: invalid}
		r.wave = &r.w
	}
}

// genID returns a call id not used in the run.
func (r *run) genID(i int) string {
	base := "rg_" + strconv.Itoa(r.round) + "_" + strconv.Itoa(i+1)
	id := base
	for n := 2; ; n++ {
		if _, used := r.ids[id]; !used {
			return id
		}
		id = base + "_" + strconv.Itoa(n)
	}
}

// callResult is what one call produced. The loop keeps one per run for
// calls dispatched alone and one per call of a parallel batch, so that the
// execution account the guards write into needs no allocation of its own.
type callResult struct {
	obs  observation.Observation
	eff  *effect // built-in calls only
	dur  time.Duration
	exec invoker.Execution // the guards' account of the execution (catalog tools)
	hold *Suspension       // a write deferred for the host's approval (Node.HostApproval)
	tool *tool.Tool        // the visible catalog tool called; nil for any other call
	// heard reports that an observer reads the call's event: when the only
	// observer is a LogObserver whose logger reports no call, the call is
	// neither timed nor reported (dur stays 0).
	heard bool
	// streamed are the events of a call of a parallel batch, kept for the
	// run's stream, which receives them once the batch returned.
	streamed []Event
	// check is the step verifier's verdict after the call, as the model
	// reads it ("" without one).
	check string
}

// heard reports whether an observer reads the events of calls: any
// observer but a LogObserver alone, or a LogObserver whose logger is
// enabled at a level it reports calls at (Info, Warn for a failure).
func (r *run) heard(ctx context.Context) bool {
	if r.sink != nil {
		return true
	}
	if !r.hears(EventToolInvoked) && !r.hears(EventToolEnd) {
		return false
	}
	lo := r.l.logOnly
	if lo == nil {
		return true
	}
	lg := lo.log()
	return lg.Enabled(ctx, slog.LevelInfo) || lg.Enabled(ctx, slog.LevelWarn)
}

// processWave processes the calls of the current wave in order, applying
// the rules of §6, until the wave is over or the run stops. It returns an
// error only for an interruption; the wave then resumes at the call that
// was interrupted.
func (r *run) processWave(ctx context.Context) error {
	for r.wave != nil && r.status == 0 {
		w := r.wave
		calls := r.msgs[w.msg].ToolCalls
		if w.next >= len(calls) {
			r.wave = nil
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		i := w.next
		if r.node.ParallelReads {
			if j := r.readBatchEnd(calls, i); j-i > 1 {
				outs, err := r.runBatch(ctx, calls[i:j], i)
				for k := range outs {
					for _, e := range outs[k].streamed {
						r.sink.put(e)
					}
				}
				if err != nil {
					return err
				}
				for k := range outs {
					if r.apply(ctx, i+k, &outs[k]) {
						break
					}
				}
				if err := r.verr; err != nil {
					r.verr = nil
					return err
				}
				continue
			}
		}
		out := &r.cur
		*out = callResult{}
		if err := r.dispatch(ctx, calls[i], i, out, false); err != nil {
			return err
		}
		r.apply(ctx, i, out)
		if err := r.verr; err != nil {
			r.verr = nil
			return err
		}
	}
	return nil
}

// readBatchEnd returns the end of the run of consecutive well-formed calls
// of visible read-only catalog tools that starts at i.
func (r *run) readBatchEnd(calls []ToolCall, i int) int {
	j := i
	for j < len(calls) {
		if _, bad := r.wave.invalid[j]; bad {
			break
		}
		t, ok := r.visible[calls[j].Name]
		if !ok || t.Effect != tool.Read {
			break
		}
		j++
	}
	return j
}

// runBatch runs read-only calls concurrently, bounded by the node's
// MaxParallel, and returns their results in call order. Every goroutine is
// joined before it returns; on an error (cancellation, infrastructure) no
// result is kept and the wave resumes at the batch's first call. A panic in
// host code on one of the goroutines (an interceptor, a policy; tool panics
// are caught by the default invoker) cancels the others and is raised again
// on the caller's goroutine once all of them returned, with the same value,
// as it would be with sequential calls.
func (r *run) runBatch(ctx context.Context, calls []ToolCall, first int) ([]callResult, error) {
	outs := make([]callResult, len(calls))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.node.maxParallel())
	var (
		panicOnce sync.Once
		panicked  bool
		value     any
	)
	for k := range calls {
		g.Go(func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					panicOnce.Do(func() { panicked, value = true, p })
					err = errBatchPanic
				}
			}()
			return r.dispatch(gctx, calls[k], first+k, &outs[k], true)
		})
	}
	err := g.Wait()
	if panicked {
		panic(value)
	}
	if err != nil {
		return outs, err // for the events they hold, not their results
	}
	return outs, nil
}

// errBatchPanic cancels the other calls of a batch when one panicked.
var errBatchPanic = errors.New("react: a parallel call panicked")

// call produces the observation of call i of the wave into out, which
// must be zero. Only the fields of r that are fixed during a wave are read
// here, so that reads can be dispatched concurrently.
func (r *run) call(ctx context.Context, c ToolCall, i int, out *callResult) error {
	out.heard = r.heard(ctx)
	var start time.Time
	if out.heard {
		start = r.l.now()
	}
	res := func(obs observation.Observation, eff *effect) error {
		out.obs, out.eff = obs, eff
		if out.heard {
			out.dur = r.l.now().Sub(start)
		}
		return nil
	}
	if p, bad := r.wave.invalid[i]; bad && p.Kind == problemCutOff {
		return res(observation.Rejected(errcode.ToolCallCutOff,
			r.cat.Reason(errcode.ToolCallCutOff, "tool", c.Name, "reason", p.Reason),
			r.cat.Text(prompt.NextCallCutOff, "tool", c.Name)), nil)
	}
	if p, bad := r.wave.invalid[i]; bad {
		return res(observation.Rejected(errcode.ToolCallInvalid,
			r.cat.Reason(errcode.ToolCallInvalid, "detail", r.problemText(p)),
			r.cat.Text(prompt.NextFixCall)), nil)
	}
	call := invoker.Call{ID: c.ID, Name: c.Name, Args: c.Args, Run: r.id, Round: r.round, Attempt: 1, Require: r.node.Require[c.Name]}
	if r.runsBuiltin(c.Name) {
		eff := &effect{}
		call.Tool = r.builtinTool(c.Name, eff)
		obs, err := r.l.builtins(ctx, call)
		if err != nil {
			return err
		}
		if eff.infra != nil {
			return fmt.Errorf("react: %s: %w", c.Name, eff.infra)
		}
		return res(builtinObservation(obs, eff), eff)
	}
	t, ok := r.visible[c.Name]
	if !ok {
		return res(observation.Rejected(errcode.CatalogDenied,
			r.cat.Reason(errcode.CatalogDenied, "tool", c.Name),
			r.cat.Text(prompt.NextCatalog, "tools", r.cat.List(r.offered))), nil)
	}
	call.Tool = t
	call.Execution = &out.exec
	out.tool = t
	obs, err := r.l.handler(ctx, call)
	if err != nil {
		return err
	}
	if obs.IsZero() {
		// A handler broke its contract; the call must still get a verdict.
		obs = observation.Failed(errcode.ToolError,
			r.cat.Reason(errcode.ToolError, "tool", c.Name, "detail", "no verdict"),
			r.cat.Text(prompt.NextToolError, "tool", c.Name))
	}
	if r.node.HostApproval && obs.Outcome() == outcome.Deferred && obs.Code() == errcode.ApprovalRequired {
		hold, err := r.hostApproval(ctx, c)
		if err != nil {
			return err
		}
		out.hold = hold
	}
	return res(obs, nil)
}

// runsBuiltin reports whether a well-formed call of name runs as a
// built-in control tool (builtin_output_set only for a node with outputs).
func (r *run) runsBuiltin(name string) bool {
	return isBuiltin(name) && (name != ToolOutputSet || len(r.node.Outputs) > 0)
}

// hostApproval returns the suspension for the write call c that the write
// gate deferred for approval, when the run's Approvals store holds c as
// the call waiting; nil when it holds another call or none (a custom chain
// that deferred without gating): the model is then answered as usual.
func (r *run) hostApproval(ctx context.Context, c ToolCall) (*Suspension, error) {
	g, ok, err := r.l.approvals.Gated(ctx, r.id)
	if err != nil {
		return nil, fmt.Errorf("react: approvals: %w", err)
	}
	if !ok || g.CallID != c.ID || g.Tool != c.Name {
		return nil, nil
	}
	return &Suspension{
		Kind:   SuspendApproval,
		CallID: c.ID,
		Approval: &PendingWrite{
			CallID:      g.CallID,
			Tool:        g.Tool,
			Args:        jsonOrText(g.Args),
			Fingerprint: g.Fingerprint,
		},
	}, nil
}

func (r *run) problemText(p problem) string {
	switch p.Kind {
	case problemNoID:
		return r.cat.Text(prompt.ReasonCallWithoutID)
	case problemIDRepeated:
		return r.cat.Text(prompt.ReasonCallIDRepeated, "id", p.ID)
	case problemIDTooLong:
		return r.cat.Text(prompt.ReasonCallIDTooLong, "max", strconv.Itoa(MaxCallID))
	case problemNameTooLong:
		return r.cat.Text(prompt.ReasonCallNameTooLong, "max", strconv.Itoa(MaxToolName))
	default:
		return r.cat.Text(prompt.ReasonCallWithoutName)
	}
}

// apply applies the rules of §6 to the result of call i, in order, and
// reports whether the wave is over:
//
//  1. write the tool message (a suspending call's message waits for the
//     decision);
//  2. the node was exited via a control tool → stop;
//  3. finish rejected → one stall, next round;
//  4. Stalls() → one stall, skip the rest of the wave, next round (the
//     node fails past the no-progress limit);
//  5. not SUCCESS → skip the rest of the wave (DEFERRED: no count, no
//     reset);
//  6. Advances() → reset the counter.
func (r *run) apply(ctx context.Context, i int, out *callResult) bool {
	w := r.wave
	c := r.msgs[w.msg].ToolCalls[i]
	obs := out.obs
	success := obs.Outcome() == outcome.Success
	if out.eff != nil && success && out.eff.kind == effectSuspend {
		r.status, r.susp = Suspended, out.eff.suspension
		return true // w.next stays at i: the decision answers this call
	}
	if out.hold != nil {
		r.status, r.susp = Suspended, out.hold
		return true // w.next stays at i: the write runs, or is declined, on resume
	}
	rep := r.report(c, i, out)
	if out.tool != nil && r.verifier != nil && (obs.Outcome() == outcome.Success || obs.Outcome() == outcome.Failed) {
		v, err := r.verifyCall(ctx, rep, obs)
		if err != nil {
			r.verr = err // processWave interrupts the run; the call is dispatched again on resume
			return true
		}
		if v != nil {
			rep.Check, out.check = v, r.checkNote(*v)
		}
	}
	if out.eff != nil && out.eff.verdict != nil {
		rep.Check = out.eff.verdict
	}
	r.writeObservation(ctx, c, i, obs, out, rep)
	w.next = i + 1
	if out.tool != nil && out.tool.Effect.IsWrite() {
		switch obs.Outcome() {
		case outcome.Failed:
			r.writeFailed = true
		case outcome.Success:
			r.writeFailed = false
		default: // the write did not run
		}
	}
	if out.eff != nil && success {
		switch out.eff.kind {
		case effectFinish:
			r.status, r.summary = Finished, out.eff.summary
			r.skipRest(ctx, c.Name)
			return true
		case effectFail:
			r.status = Failed
			r.failure = &Failure{Kind: FailedByModel, Reason: out.eff.reason}
			r.skipRest(ctx, c.Name)
			return true
		default: // an output was set (a suspension returned above)
		}
	}
	switch {
	case c.Name == ToolFinish && out.eff != nil && obs.Outcome() == outcome.Rejected:
		r.skipRest(ctx, "")
		r.stall(ctx, "finish_rejected", c.ID)
		return true
	case obs.Outcome().Stalls():
		r.skipRest(ctx, "")
		r.stall(ctx, obs.Outcome().String(), c.ID)
		return true
	case !success:
		r.skipRest(ctx, "")
		return true
	}
	r.resetStalls(ctx, c.ID)
	return false
}

// writeObservation writes the tool message of call c, the i-th of its
// turn, keeps its report in the run's call reports and reports it.
func (r *run) writeObservation(ctx context.Context, c ToolCall, i int, obs observation.Observation, out *callResult, rep CallReport) {
	check := ""
	if out != nil {
		check = out.check
	}
	r.appendMsg(Message{
		Role:       RoleTool,
		Content:    r.render(c.ID, obs, check),
		ToolCallID: c.ID,
		ToolName:   c.Name,
		IsError:    obs.Outcome() != outcome.Success,
	})
	r.calls = grow.AppendHint(r.calls, rep, r.callsHint)
	if out == nil || out.heard {
		dur := time.Duration(0)
		if out != nil {
			dur = out.dur
		}
		e := r.toolEvent(c, i, obs, dur, rep)
		r.emit(ctx, Event{Kind: EventToolInvoked, RoundEvent: e.RoundEvent, Tool: &e})
	}
}

// appendMsg appends m to the transcript.
func (r *run) appendMsg(m Message) { r.msgs = grow.AppendHint(r.msgs, m, r.msgsHint) }

// toolEvent is the event of call i's observation and account.
func (r *run) toolEvent(c ToolCall, i int, obs observation.Observation, dur time.Duration, rep CallReport) ToolEvent {
	return ToolEvent{
		RoundEvent: r.roundEvent(), CallID: c.ID, Tool: c.Name, Builtin: rep.Builtin,
		Outcome: obs.Outcome(), Code: obs.Code(), Duration: dur, Err: obs.Cause(),
		Position: i, Layers: rep.Layers, Offered: r.offered, SchemaVersion: r.schemaVersion(c.Name),
		Provenance: rep.Provenance,
	}
}

// skipRest answers every call after the current one and closes the wave:
// with REASON_SKIPPED when an earlier call did not succeed (exitedBy is
// ""), with REASON_SKIPPED_EXITED naming the control tool exitedBy when
// that call succeeded and exited the node (finish, fail, a suspension that
// was decided).
func (r *run) skipRest(ctx context.Context, exitedBy string) {
	w := r.wave
	calls := r.msgs[w.msg].ToolCalls
	for k := w.next; k < len(calls); k++ {
		c := calls[k]
		reason := r.cat.Text(prompt.ReasonSkipped, "tool", c.Name)
		if exitedBy != "" {
			reason = r.cat.Text(prompt.ReasonSkippedExited, "tool", c.Name, "by", exitedBy)
		}
		r.appendMsg(Message{
			Role:       RoleTool,
			Content:    r.cat.Message(reason, r.cat.Text(prompt.NextSkipped, "tool", c.Name)),
			ToolCallID: c.ID,
			ToolName:   c.Name,
			IsError:    true,
		})
		if r.hears(EventToolSkipped) {
			re := r.roundEvent()
			r.emit(ctx, Event{Kind: EventToolSkipped, RoundEvent: re, Tool: &ToolEvent{RoundEvent: re, CallID: c.ID, Tool: c.Name, Builtin: isBuiltin(c.Name),
				Position: k, Offered: r.offered, SchemaVersion: r.schemaVersion(c.Name)}})
		}
	}
	w.next = len(calls)
	r.wave = nil
}

// render is the content of a tool message: the message of a non-success,
// or a success's message followed by its payload as JSON, cut down to the
// loop's MaxResultBytes with RESULT_TRUNCATED naming the call id under
// which the full payload is recorded when the evidence guard keeps it
// (within its MaxPayload, or offloaded), RESULT_TRUNCATED_NOT_KEPT
// otherwise.
func (r *run) render(callID string, obs observation.Observation, check string) string {
	if obs.Outcome() != outcome.Success {
		if check != "" {
			return obs.MessageIn(r.cat) + "\n" + check
		}
		return obs.MessageIn(r.cat)
	}
	msg := obs.Reason()
	if check != "" {
		msg += "\n" + check
	}
	if obs.Data() == nil {
		return msg
	}
	b, err := obs.DataJSON() // encoded once, by the evidence guard
	if err != nil {
		return msg
	}
	if max := r.l.maxResult; max > 0 && len(b) > max {
		cut := max
		for cut > 0 && !utf8Start(b[cut]) {
			cut--
		}
		if !r.l.payloadKept(len(b)) {
			return msg + "\n" + string(b[:cut]) + "\n" + r.cat.Text(prompt.ResultTruncatedNotKept,
				"kept", strconv.Itoa(cut), "total", strconv.Itoa(len(b)))
		}
		return msg + "\n" + string(b[:cut]) + "\n" + r.cat.Text(prompt.ResultTruncated,
			"kept", strconv.Itoa(cut), "total", strconv.Itoa(len(b)), "ref", callID)
	}
	if msg == "" {
		return string(b)
	}
	return msg + "\n" + string(b)
}

// payloadKept reports whether the evidence guard keeps a payload of n bytes
// in full (in the ledger, or offloaded), so that RESULT_TRUNCATED may name
// it; false when the loop does not know (a custom handler).
func (l *Loop) payloadKept(n int) bool {
	return l.keptUpTo < 0 || n <= l.keptUpTo
}

// utf8Start reports whether b can start a UTF-8 sequence.
func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// decide applies the user's decision to the suspended call and closes its
// wave: the call's tool message is the decision, a SUCCESS (§6: it
// advances); the calls after it in the wave are skipped, as after any
// control tool that exits the node.
// applied says the approvals store already applied an approval or a
// refusal, with the snapshot's claim (ClaimDecider).
func (r *run) decide(ctx context.Context, d Decision, applied bool) error {
	s := r.susp
	if s.Kind == SuspendApproval && s.Approval != nil && s.CallID == s.Approval.CallID {
		return r.decideHost(ctx, d, applied)
	}
	var msg string
	switch {
	case s.Kind == SuspendApproval && d.kind == decideApprove:
		if err := r.approve(ctx, applied); err != nil {
			return err
		}
		msg = r.cat.Text(prompt.ResultApprovalGranted, "tool", s.Approval.Tool)
	case s.Kind == SuspendApproval && d.kind == decideDecline:
		if err := r.decline(ctx, applied); err != nil {
			return err
		}
		msg = r.declined(s.Approval.Tool, d.text)
	case s.Kind == SuspendFollowUp && d.kind == decideAnswer:
		answer := validText(strings.TrimSpace(d.text))
		if err := r.l.ledger.AddUserText(ctx, r.id, answer); err != nil {
			return fmt.Errorf("react: evidence: %w", err)
		}
		r.userTexts = append(r.userTexts, answer)
		r.answers = append(r.answers, qa{Question: s.Question, Answer: answer})
		r.setAnswered(s.Question, answer)
		msg = r.cat.Text(prompt.ResultFollowUpAnswer, "answer", answer)
	default:
		return fmt.Errorf("%w: the run waits for %s, not %s", ErrDecision, s.Kind, d)
	}
	w := r.wave
	c := r.msgs[w.msg].ToolCalls[w.next]
	r.susp, r.status = nil, 0
	obs := observation.Success(msg, nil)
	r.writeObservation(ctx, c, w.next, obs, nil, CallReport{CallID: c.ID, Tool: c.Name, Round: r.round, Builtin: true,
		Outcome: obs.Outcome(), Layers: Layers{Call: CallValid}})
	w.next++
	r.resetStalls(ctx, c.ID)
	r.skipRest(ctx, c.Name)
	return nil
}

// decideHost applies the decision on a write the run suspended for by
// itself (Node.HostApproval). Approve grants the call and leaves it as the
// wave's next call, so that the loop runs it through the guard chain (the
// write gate consumes the approval) and writes its own result; an
// interruption there leaves it to run on Continue. Decline answers the
// write call with RESULT_APPROVAL_DECLINED and skips the rest of the turn.
func (r *run) decideHost(ctx context.Context, d Decision, applied bool) error {
	s := r.susp
	switch d.kind {
	case decideApprove:
		if err := r.approve(ctx, applied); err != nil {
			return err
		}
		r.susp, r.status = nil, 0
		return nil
	case decideDecline:
		if err := r.decline(ctx, applied); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: the run waits for %s, not %s", ErrDecision, s.Kind, d)
	}
	w := r.wave
	c := r.msgs[w.msg].ToolCalls[w.next]
	r.susp, r.status = nil, 0
	obs := observation.Success(r.declined(s.Approval.Tool, d.text), nil)
	r.writeObservation(ctx, c, w.next, obs, nil, CallReport{CallID: c.ID, Tool: c.Name, Round: r.round,
		Outcome: obs.Outcome(), Layers: Layers{Call: CallDeferred}})
	w.next++
	r.resetStalls(ctx, c.ID)
	r.skipRest(ctx, c.Name)
	return nil
}

// approve approves the suspended call in the approvals store, unless the
// claim already applied it.
func (r *run) approve(ctx context.Context, applied bool) error {
	if applied {
		return nil
	}
	a := r.susp.Approval
	if err := r.l.approvals.Approve(ctx, r.id, a.CallID, a.Fingerprint); err != nil {
		return fmt.Errorf("react: approvals: %w", err)
	}
	return nil
}

// decline declines the suspended call in the approvals store, unless the
// claim already applied it.
func (r *run) decline(ctx context.Context, applied bool) error {
	if applied {
		return nil
	}
	if err := r.l.approvals.Decline(ctx, r.id, r.susp.Approval.CallID); err != nil {
		return fmt.Errorf("react: approvals: %w", err)
	}
	return nil
}

// declined renders RESULT_APPROVAL_DECLINED for toolName with the user's
// reason, if any.
func (r *run) declined(toolName, reason string) string {
	detail := ""
	if reason := validText(strings.TrimSpace(reason)); reason != "" {
		detail = ": " + reason
		if r.cat.Lang() == prompt.Chinese {
			detail = "：" + reason
		}
	}
	return r.cat.Text(prompt.ResultApprovalDeclined, "tool", toolName, "detail", detail)
}

// validText returns s with every invalid UTF-8 sequence replaced by U+FFFD,
// without allocating when s is valid. Text that enters a run (the model's
// turns, the user's words) is made valid once, where it enters, so that
// the transcript, the evidence and the snapshot all hold the same text.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// validJSONText returns a copy of b made valid UTF-8 like [validText]
// (JSON decoders read invalid sequences as U+FFFD anyway), and buf. A
// valid b is copied to the end of buf, which is returned with b appended:
// sized for a turn's arguments, it holds them all in one allocation. The
// copy's capacity is its length, so appending to it never writes into the
// next one's. An empty b gives nil, as a copy by append does.
func validJSONText(b json.RawMessage, buf []byte) (json.RawMessage, []byte) {
	switch {
	case len(b) == 0:
		return nil, buf
	case !utf8.Valid(b):
		return json.RawMessage(strings.ToValidUTF8(string(b), "\uFFFD")), buf
	}
	i := len(buf)
	buf = append(buf, b...)
	return json.RawMessage(buf[i:len(buf):len(buf)]), buf
}

package react

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

// Pending is what a stopped run waits for, read from its sealed snapshot:
// the fields an approvals inbox shows. Nothing in it comes from a column
// of the run store, so an edited row cannot make a person approve
// something else than what the run would execute.
type Pending struct {
	// Run is the run's id.
	Run string
	// Node is the run's node name.
	Node string
	// Owner is the run's owner, as sealed.
	Owner Owner
	// Status is Suspended or Interrupted.
	Status Status
	// Suspension is what a Suspended run waits for, with its Ticket; nil
	// for an Interrupted run (resume it with [Continue]).
	Suspension *Suspension
	// Arguments are the arguments of the write waiting for approval, one
	// per top-level member in the order the model sent them, each with
	// where its value came from; nil for a follow-up, an interrupted run,
	// or arguments that are not a JSON object.
	Arguments []Argument
	// Sealed is when the snapshot was sealed (the run stopped).
	Sealed time.Time
	// Round is the number of model turns the run has taken.
	Round int
	// HostKind is the kind of host state the run carries ([WithHostState]):
	// a run that is a step of a task says "reactguard.task", and must be
	// resumed through its host; "" for a plain run. HostState is that
	// state, as sealed.
	HostKind  string
	HostState []byte
	// Thread is the thread whose message the run answers ([InThread]);
	// "" outside a thread.
	Thread string
	// Decided is the decision recorded in Config.Audit on this suspension,
	// if any: the run has not moved on from it yet because its resume is
	// running now, died, or could not apply it (giving the same decision
	// again applies it; another kind is refused), or because the run ended
	// and its record is still to be deleted. An inbox shows it instead of
	// asking again. Nil when nobody decided.
	Decided *runstore.Decision
}

// Argument is one argument of a write waiting for approval.
type Argument struct {
	// Name is the argument's name.
	Name string
	// Value is its JSON value as the model sent it.
	Value json.RawMessage
	// Source is where the tool declares the value must come from
	// (tool.Tool.Params); FromAny when it declares nothing. The parameter
	// contract checked the value against it before the write was gated.
	Source tool.Source
	// Calls are the ids of the earlier successful calls of Source.Tool
	// whose results, as the model saw them, hold the value (FromResult),
	// or the reference of the earlier step's verified outputs that hold
	// it (FromStep: evidence.StepRef of Source.Step).
	Calls []string
	// UserText is the index, in the run's user texts (the task, then each
	// answer to a follow-up, in order), of the first that holds the value
	// (FromUser); -1 when none holds it or the source is another kind.
	UserText int
	// Shadowed reports a member that a later member of the same name
	// replaces: JSON decoders keep the last of repeated names (Go's
	// encoding/json matches them without regard to case), so the tool
	// never receives this value. An inbox shows it struck out, or refuses
	// to offer the approval.
	Shadowed bool
	// Earlier reports, for a run answering a message of a thread
	// ([InThread]), a value that this run's own words and results do not
	// hold (UserText -1, no Calls) and the thread's earlier turns do: the
	// user's words of an earlier message (FromUser), or a result of Source.Tool
	// in an earlier message (FromResult). The parameter contract accepted
	// it from there.
	Earlier bool
}

// Pending returns what the stopped run id waits for, read from the
// snapshot Config.Runs holds for it and verified as [Loop.Resume] verifies
// it (seal, key, age, size): the errors wrapping [ErrSnapshot] say what
// failed. It returns [ErrNoRunStore] without a run store, an error
// wrapping [ErrRunNotFound] when the store holds no such run,
// [ErrSnapshotRun] when it holds another run's snapshot under id, and
// [ErrNotOwner] when the caller's owner ([WithOwner]) does not cover the
// run's. It changes nothing.
func (l *Loop) Pending(ctx context.Context, id string, opts ...RunOption) (Pending, error) {
	if ctx == nil {
		return Pending{}, fmt.Errorf("%w (Pending)", ErrNilContext)
	}
	if l.runs == nil {
		return Pending{}, ErrNoRunStore
	}
	l.retryPending(ctx)
	rec, ok, err := l.runs.Get(ctx, id)
	if err != nil {
		return Pending{}, fmt.Errorf("react: run store: get run %s: %w", id, err)
	}
	if !ok {
		return Pending{}, fmt.Errorf("%w: %q", ErrRunNotFound, id)
	}
	return l.pendingOf(ctx, id, rec.Snapshot, applyOptions(opts))
}

// Inspect returns what the run of snapshot waits for, as [Loop.Pending]
// does for a stored run, for a host that keeps snapshots itself.
func (l *Loop) Inspect(ctx context.Context, snapshot []byte, opts ...RunOption) (Pending, error) {
	if ctx == nil {
		return Pending{}, fmt.Errorf("%w (Inspect)", ErrNilContext)
	}
	return l.pendingOf(ctx, "", snapshot, applyOptions(opts))
}

func (l *Loop) pendingOf(ctx context.Context, id string, snapshot []byte, o runOptions) (Pending, error) {
	s, err := l.open(snapshot)
	if err != nil {
		return Pending{}, err
	}
	if id != "" && s.Run != id {
		return Pending{}, fmt.Errorf("%w: the run store holds a snapshot of run %q under %q", ErrSnapshotRun, s.Run, id)
	}
	if !o.owner.Covers(s.Owner) {
		return Pending{}, fmt.Errorf("%w: run %s", ErrNotOwner, s.Run)
	}
	p := Pending{Run: s.Run, Node: s.Node.Name, Owner: s.Owner, Status: s.Status, Sealed: s.sealedAt(), Round: s.Round}
	if s.Host != nil {
		p.HostKind, p.HostState = s.Host.Kind, append([]byte(nil), s.Host.State...)
	}
	if s.Thread != nil {
		p.Thread = s.Thread.ID
	}
	if sp := s.Suspension.suspension(); sp != nil {
		sp.Ticket = s.key.ticket(s)
		p.Suspension = sp
		if w := sp.Approval; w != nil {
			p.Arguments = l.arguments(s, w)
			if err := l.earlier(ctx, s, p.Arguments); err != nil {
				return Pending{}, err
			}
		}
		rec, decided, err := l.audit.Decided(ctx, s.Run, s.ID)
		if err != nil {
			return Pending{}, fmt.Errorf("react: audit: %w", err)
		}
		if decided {
			p.Decided = &rec
		}
	}
	return p, nil
}

// arguments lays out the pending write's arguments with their sources.
func (l *Loop) arguments(s *snapState, w *PendingWrite) []Argument {
	var members []member
	members, ok := objectMembers(w.Args, members)
	if !ok {
		return nil
	}
	var params map[string]tool.Source
	if t, found := l.catalog.Lookup(w.Tool); found {
		params = t.Params
	}
	out := make([]Argument, 0, len(members))
	for _, m := range members {
		a := Argument{Name: m.name, Value: json.RawMessage(m.value), Source: tool.Free(), UserText: -1}
		if src, declared := params[m.name]; declared {
			a.Source = src
		}
		texts := scalarTexts(a.Value)
		switch a.Source.Kind {
		case tool.FromResult:
			a.Calls = resultCalls(s, a.Source.Tool, texts)
		case tool.FromUser:
			for i, u := range s.UserTexts {
				if holdsAll(u, texts) {
					a.UserText = i
					break
				}
			}
		case tool.FromStep:
			a.Calls = stepCalls(s, a.Source.Step, a.Source.Field, texts)
		case tool.FromAny:
		}
		out = append(out, a)
	}
	for i := range out {
		for _, later := range out[i+1:] {
			if strings.EqualFold(out[i].Name, later.Name) {
				out[i].Shadowed = true
				break
			}
		}
	}
	return out
}

// earlier marks the arguments of a run in a thread whose values the
// thread's earlier turns hold (see Argument.Earlier).
func (l *Loop) earlier(ctx context.Context, s *snapState, args []Argument) error {
	if s.Thread == nil || l.threads == nil {
		return nil
	}
	ev := l.threads.Evidence()
	for i := range args {
		a := &args[i]
		texts := scalarTexts(a.Value)
		if len(texts) == 0 {
			continue
		}
		all := true
		for _, v := range texts {
			var held bool
			var err error
			switch {
			case a.Source.Kind == tool.FromUser && a.UserText < 0:
				held, err = ev.UserSaid(ctx, s.Thread.ID, v)
			case a.Source.Kind == tool.FromResult && len(a.Calls) == 0:
				held, err = ev.HasValue(ctx, s.Thread.ID, a.Source.Tool, a.Source.Field, v)
			}
			if err != nil {
				return fmt.Errorf("react: thread store: evidence of %s: %w", s.Thread.ID, err)
			}
			all = all && held
		}
		a.Earlier = all
	}
	return nil
}

// resultCalls returns the ids of the successful calls of toolName whose
// tool messages hold every text.
func resultCalls(s *snapState, toolName string, texts []string) []string {
	if len(texts) == 0 {
		return nil
	}
	var ids []string
	for _, m := range s.Transcript {
		if m.Role == RoleTool && m.ToolName == toolName && !m.IsError && holdsAll(m.Content, texts) {
			ids = append(ids, m.ToolCallID)
		}
	}
	return ids
}

// stepCalls returns the reference of step's verified outputs when output
// key holds every text.
func stepCalls(s *snapState, step, key string, texts []string) []string {
	if s.Inputs == nil || len(texts) == 0 {
		return nil
	}
	for _, in := range s.Inputs.Steps {
		if in.Step == step && holdsAll(in.Outputs[key], texts) {
			return []string{evidence.StepRef(step)}
		}
	}
	return nil
}

// scalarTexts returns the texts of the scalars of a JSON value.
func scalarTexts(v json.RawMessage) []string {
	var out []string
	_ = evidence.Walk(v, func(_, text string) bool {
		if text != "" {
			out = append(out, text)
		}
		return true
	})
	return out
}

func holdsAll(s string, texts []string) bool {
	if len(texts) == 0 {
		return false
	}
	for _, t := range texts {
		if !strings.Contains(s, t) {
			return false
		}
	}
	return true
}

// member is one top-level member of a JSON object.
type member struct {
	name  string
	value []byte
}

// objectMembers returns the members of the JSON object b, in order; false
// when b is not an object.
func objectMembers(b []byte, dst []member) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		dst = append(dst, member{name: name, value: v})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // data after the object
	}
	return dst, true
}

// PendingPage is a page of [Loop.ListPending].
type PendingPage struct {
	// Runs are the runs of the page that opened, oldest first.
	Runs []Pending
	// Skipped are the runs of the page whose snapshot did not open (its
	// seal, key, age or size failed, or it is another run's or owner's),
	// with why: an inbox never shows them as waiting; an operator looks at
	// them.
	Skipped []SkippedRun
	// Next continues the listing ([runstore.Filter].Cursor); "" on the last
	// page.
	Next string
}

// SkippedRun is a listed run whose snapshot did not open.
type SkippedRun struct {
	ID  string
	Err error
}

// ListPending lists the stopped runs of the caller's owner ([WithOwner]:
// the filter's Owner is replaced by it, so a caller never lists another
// owner's runs) that f selects, oldest first, a page at a time, each read
// from its sealed snapshot as [Loop.Pending] reads it. It returns
// [ErrNoRunStore] without a run store and the store's error (an
// [runstore.ErrInvalidCursor] for a cursor of another filter or owner).
func (l *Loop) ListPending(ctx context.Context, f runstore.Filter, opts ...RunOption) (PendingPage, error) {
	if ctx == nil {
		return PendingPage{}, fmt.Errorf("%w (ListPending)", ErrNilContext)
	}
	if l.runs == nil {
		return PendingPage{}, ErrNoRunStore
	}
	o := applyOptions(opts)
	l.retryPending(ctx)
	owner := o.owner
	f.Owner, f.Snapshots = &owner, true
	page, err := l.runs.List(ctx, f)
	if err != nil {
		return PendingPage{}, fmt.Errorf("react: run store: list: %w", err)
	}
	out := PendingPage{Next: page.Next}
	for _, rec := range page.Runs {
		p, err := l.pendingOf(ctx, rec.ID, rec.Snapshot, o)
		if err != nil {
			if errors.Is(err, ErrNilContext) || ctx.Err() != nil {
				return PendingPage{}, err
			}
			out.Skipped = append(out.Skipped, SkippedRun{ID: rec.ID, Err: err})
			continue
		}
		out.Runs = append(out.Runs, p)
	}
	return out, nil
}

// History returns the decisions recorded on run id in Config.Audit, oldest
// first: who approved, declined or answered what, when. The caller's owner
// ([WithOwner]) must cover the run's, as recorded with each decision;
// decisions of another owner are never returned ([ErrNotOwner]).
func (l *Loop) History(ctx context.Context, id string, opts ...RunOption) ([]runstore.Decision, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w (History)", ErrNilContext)
	}
	o := applyOptions(opts)
	h, err := l.audit.History(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("react: audit: %w", err)
	}
	for _, d := range h {
		if !o.owner.Covers(d.Owner) {
			return nil, fmt.Errorf("%w: run %s", ErrNotOwner, id)
		}
	}
	return h, nil
}

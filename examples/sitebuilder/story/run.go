package story

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

// MaxResumes bounds how often [Run] resumes a suspended run; a run still
// suspended after that many resumes ends the story as it stands.
const MaxResumes = 4

// Config is one telling of the story. The zero value lacks only the
// Model: English, the user decides (here: approves, since there is no
// terminal), no output, no log, random run ids, no time bound.
type Config struct {
	// Model is the agent. Required: [Scripted] offline, or an adapter's
	// model.
	Model react.Model
	// Lang selects the user's words ([Task]) and the prompt catalog of
	// every text the model sees; 0 means English.
	Lang prompt.Lang
	// Approve and Decline answer the approval without asking; setting both
	// is an error. With neither, the user answers y/n on In when
	// Interactive; otherwise the story approves and says so.
	Approve, Decline bool
	// In is where the user's answers are read when Interactive; nil reads
	// nothing (as a closed stdin: approve, default answer).
	In io.Reader
	// Interactive says In is a terminal that a person types into.
	Interactive bool
	// Out receives the trace; nil discards it.
	Out io.Writer
	// Log receives the loop's structured events (log/slog text format) and
	// the invoker's log; nil means no log.
	Log io.Writer
	// View is the format of the trace; 0 means [Verdicts].
	View View
	// RunID is the id of the story's run (it appears in the log); empty
	// means a random one.
	RunID string
	// Timeout bounds the whole story, resumes included; 0 means no bound
	// but ctx's.
	Timeout time.Duration
	// State, when set, keeps the story's run in durable stores, so that
	// the story spans processes: Run starts a new run, which suspends for
	// approval, stays in State.Runs, and Run returns; the next Run with a
	// State over the same database finds the waiting run, gets the user's
	// decision, resumes it (ResumeRun) and tells the rest.
	State *State
	// Observer, when set, also receives the events of every loop value of
	// the story (after the trace printer and the log), e.g. the
	// OpenTelemetry observer of adapters/otel; nil means none.
	Observer react.Observer
}

// State is the durable state of a story that spans processes (see
// [Config].State).
type State struct {
	// Guards holds the durable evidence ledger, approvals and write
	// ledger.
	Guards *guard.Options
	// Claims and Runs are the resume claims and the store of stopped runs.
	Claims runstore.Claims
	Runs   runstore.Store
	// Keys seal the snapshots; every process of the story needs the same.
	Keys [][]byte
	// Hint is how to approve or decline the waiting run in a new process,
	// printed when the story suspends (a command line).
	Hint string
}

// Result is how a story ended: the last run's [react.Result], and what the
// story counted across resumes.
type Result struct {
	react.Result
	// Resumes is how often the story resumed a suspended run.
	Resumes int
	// Executions is how often create_site ran.
	Executions int
}

// Run tells the story: it runs [Node] with [Task] on cfg.Model over a new
// [Backend], printing the trace to cfg.Out. On each suspension it keeps
// only the snapshot's JSON bytes, as a host stores them in its database,
// gets the user's decision, and resumes the bytes in a new loop value that
// shares only the stores with the first, as another process would. It
// ends with the finished or failed run's summary and the number of
// create_site executions.
//
// Run returns an error for a bad Config (no Model, Approve with Decline,
// an invalid View; an error that [Exit] reports as a usage error for the
// flags), for a failed model call (the adapters' errors, wrapped by the
// loop, with the run's snapshot intact in the returned Result), for
// cancellation, and when reading the user's answer fails. The Result then
// holds what the story got to; the trace printed so far stays printed.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Approve && cfg.Decline {
		return Result{}, errExclusive
	}
	if !cfg.View.IsValid() {
		return Result{}, fmt.Errorf("story: invalid view %s", cfg.View)
	}
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	out := cfg.Out
	if out == nil {
		out = io.Discard
	}
	in := cfg.In
	if in == nil {
		in = strings.NewReader("")
	}

	backend := &Backend{}
	tools := backend.Tools()
	// The stores that must outlive a process (approvals, write ledger,
	// evidence). A service on many replicas plugs in its own; the story
	// shares in-memory ones between its loop values.
	stores := &guard.Options{Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()}
	if cfg.State != nil {
		stores = cfg.State.Guards
	}
	p := newPrinter(cfg.View, out)
	logs := io.Discard
	if cfg.Log != nil {
		logs = cfg.Log
	}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	var logObs react.Observer
	if cfg.Log != nil {
		logObs = react.NewLogObserver(logger)
	}
	obs := react.Observers(p, logObs, cfg.Observer)
	newLoop := func() (*react.Loop, error) {
		c := react.Config{Model: cfg.Model, Tools: tools, Lang: cfg.Lang, Guards: stores, Observer: obs, Logger: logger}
		if cfg.RunID != "" {
			c.NewRunID = func(context.Context) string { return cfg.RunID }
		}
		if st := cfg.State; st != nil {
			c.Claims, c.Runs, c.SnapshotKeys = st.Claims, st.Runs, st.Keys
		}
		return react.New(c)
	}

	answers := bufio.NewScanner(in)
	story := Result{}
	loop, err := newLoop()
	if err != nil {
		return Result{}, err
	}
	var res react.Result
	waiting, err := waitingRun(ctx, cfg.State)
	switch {
	case err != nil:
		return Result{}, err
	case waiting != nil:
		// A run of an earlier process waits for the user's approval: what
		// it waits for is read from its sealed snapshot, not from the
		// store's columns.
		pending, perr := loop.Pending(ctx, waiting.ID)
		if perr != nil {
			return Result{}, perr
		}
		if pending.Suspension == nil || pending.Suspension.Approval == nil {
			return Result{}, fmt.Errorf("run %s does not wait for an approval", waiting.ID)
		}
		w := pending.Suspension.Approval
		say(out, "-- run %s waits in the state store for the approval of %s(%s)\n", waiting.ID, w.Tool, w.Args)
		decision, derr := decide(&cfg, answers, out, pending.Suspension)
		if derr != nil {
			return Result{}, fmt.Errorf("reading the user's answer: %w", derr)
		}
		say(out, "-- resuming it from the state store in a new process: %s\n\n", decision)
		res, err = loop.ResumeRun(ctx, waiting.ID, decision)
		story.Resumes++
		p.skip(resumedAt(res.Transcript))
	default:
		task := Task(cfg.Lang)
		say(out, "user: %s\n\n", task)
		res, err = loop.Run(ctx, Node(), task)
		if cfg.State != nil && err == nil && res.Status == react.Suspended {
			p.print(res.Transcript)
			p.suspended(res.Suspension)
			say(out, "-- the run is kept in the state store; this process ends here.\n")
			if cfg.State.Hint != "" {
				say(out, "-- approve or decline it in a new process: %s\n", cfg.State.Hint)
			}
			story.Result, story.Executions = res, backend.Executions()
			return story, nil
		}
	}
	p.print(res.Transcript)
	for err == nil && res.Status == react.Suspended && story.Resumes < MaxResumes {
		// All that crosses to the next loop value: the snapshot's bytes.
		stored := bytes.Clone(res.Snapshot)
		p.suspended(res.Suspension)
		decision, derr := decide(&cfg, answers, out, res.Suspension)
		if derr != nil {
			err = fmt.Errorf("reading the user's answer: %w", derr)
			break
		}
		say(out, "-- resuming from the snapshot in a new loop value: %s\n\n", decision)
		if loop, err = newLoop(); err == nil {
			res, err = loop.Resume(ctx, stored, decision)
		}
		story.Resumes++
		p.print(res.Transcript)
	}
	story.Result, story.Executions = res, backend.Executions()
	if err != nil {
		return story, err
	}

	sayln(out)
	switch res.Status {
	case react.Finished:
		say(out, "-- finished after %d rounds: %s\n", res.Rounds, res.Summary)
		for _, o := range Node().Outputs {
			if v, ok := res.Outputs[o.Key]; ok {
				say(out, "   output %s = %s (from %s %s)\n", o.Key, v.Value, v.Source, v.Ref)
			}
		}
	case react.Failed:
		say(out, "-- failed after %d rounds (%s): %s\n", res.Rounds, res.Failure.Kind, res.Failure.Reason)
	default:
		say(out, "-- stopped: %s after %d rounds\n", res.Status, res.Rounds)
	}
	say(out, "   create_site executed %d time(s)\n", story.Executions)
	return story, nil
}

// resumedAt returns the index in transcript of the first message the
// resume added: the tool message answering builtin_node_approval.
func resumedAt(transcript []react.Message) int {
	for i, m := range transcript {
		if m.Role == react.RoleTool && m.ToolName == "builtin_node_approval" {
			return i
		}
	}
	return len(transcript)
}

// waitingRun returns the oldest run of the story's node waiting for
// approval in st, or nil.
func waitingRun(ctx context.Context, st *State) (*runstore.Run, error) {
	if st == nil {
		return nil, nil
	}
	page, err := st.Runs.List(ctx, runstore.Filter{Kind: runstore.Approval, Node: Node().Name, Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("state store: %w", err)
	}
	if len(page.Runs) == 0 {
		return nil, nil
	}
	return &page.Runs[0], nil
}

// errExclusive is the usage error of Approve with Decline.
var errExclusive = &usageError{err: errors.New("-approve and -decline exclude each other")}

package storetest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reactguard/reactguard/fingerprint"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

// The environment of the crash and recovery children.
const (
	EnvCrashAt    = "REACTGUARD_STORETEST_CRASH_AT"    // the store call (1-based) at which the child kills itself
	EnvCrashAfter = "REACTGUARD_STORETEST_CRASH_AFTER" // "1": once the store answered that call, else before it
	EnvDeadline   = "REACTGUARD_STORETEST_DEADLINE"    // how long a recovering child or a failover load child keeps trying
)

// The roles of the crash-point harness and the failover load.
const (
	RoleCrash    = "crash"    // run the story (Run, then ResumeRun with Approve) and SIGKILL itself at EnvCrashAt
	RoleRecover  = "recover"  // bring the run to its end as a host would, whatever state the killed child left
	RoleFailover = "failover" // many runs at once, each brought to its end through store failures (retrying as a host would)
)

// CrashNode is the node of the crash and failover scenarios: it reads,
// then writes with the user's approval, whatever it takes.
var CrashNode = react.Node{Name: "storetest-crash", Instructions: "Create the site the user asks for.",
	Tools: []string{"create_site", "get_space"}, MaxRounds: 40}

// crashAgent reads the space, creates the site and, whenever the write
// does not succeed, asks for approval; when there is nothing to approve
// (the write is in flight or waits for verification) it asks the user what
// to do; then it writes again. It finishes once a write succeeded. Its
// call ids follow from the transcript, so a resume in another process
// plays the same.
func crashAgent(req react.Request) react.Response {
	var read bool
	var last *react.Message // the last create_site result
	var after []react.Message
	n := 0
	for i := range req.Messages {
		m := req.Messages[i]
		if m.Role != react.RoleTool {
			continue
		}
		n++
		switch m.ToolName {
		case "get_space":
			read = true
		case "create_site":
			last, after = &req.Messages[i], nil
		default:
			if last != nil {
				after = append(after, m)
			}
		}
	}
	id := "x" + strconv.Itoa(n+1)
	create := reacttest.Call(id, "create_site", CreateArgs)
	switch {
	case !read:
		return reacttest.Calls(reacttest.Call(id, "get_space", CreateArgs))
	case last == nil:
		return reacttest.Turn("Creating the site.", create)
	case !last.IsError:
		return reacttest.Calls(reacttest.Finish(id, "created"))
	case len(after) == 0:
		return reacttest.Calls(reacttest.Approval(id, "create_site", "create Spring Sale in sp-42"))
	}
	switch a := after[len(after)-1]; {
	case !a.IsError: // approved, or the user answered
		return reacttest.Calls(create)
	case a.ToolName == react.ToolApproval: // nothing to approve: in flight or to verify
		return reacttest.Calls(reacttest.FollowUp(id, "Creating the site has not been verified yet. What should I do?"))
	}
	return reacttest.Calls(reacttest.FailNode(id, "the user could not be asked"))
}

// crashCatalog is create_site over b (with a Verify) and get_space.
func crashCatalog(b backend) (*tool.Catalog, error) {
	create := tool.New("create_site", "Create a website.", func(context.Context, createInput) (any, error) { return nil, nil })
	create.Effect = tool.Write
	create.Func = func(_ context.Context, req tool.Request) (any, error) { return b.apply(req.IdempotencyKey) }
	create.Verify = b.verify
	get := tool.New("get_space", "Get a space.", func(context.Context, createInput) (any, error) {
		return map[string]string{"space_id": "sp-42", "name": "Spring Sale"}, nil
	})
	get.Effect = tool.Read
	return tool.NewCatalog(create, get)
}

// CrashKey returns the idempotency key of the crash scenarios' write in
// run.
func CrashKey(run string) string {
	fp, err := fingerprint.Of("create_site", []byte(CreateArgs))
	if err != nil {
		panic(err)
	}
	return guard.IdempotencyKey(run, fp)
}

// claimLog appends "<run> <id> <pid>" to dir/claims.log for every resume
// claim a child was granted.
func claimLog(dir string) func(run, id string) {
	return func(run, id string) {
		f, err := os.OpenFile(filepath.Join(dir, "claims.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return
		}
		defer func() { _ = f.Close() }()
		_, _ = fmt.Fprintf(f, "%q %q %d\n", run, id, os.Getpid())
	}
}

// Claim is one resume claim a child was granted.
type Claim struct {
	Run, ID string
	PID     int
}

// Claims returns the resume claims the children were granted, in order.
func Claims(dir string) ([]Claim, error) {
	f, err := os.Open(filepath.Join(dir, "claims.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []Claim
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c Claim
		if _, err := fmt.Sscanf(sc.Text(), "%q %q %d", &c.Run, &c.ID, &c.PID); err != nil {
			return nil, fmt.Errorf("claims.log: %q: %w", sc.Text(), err)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// crashLoop returns the loop of the crash and failover children over
// stores instrumented with h.
func crashLoop(stores Stores, h *Hook, newID func() string) (*react.Loop, error) {
	b := backend{path: filepath.Join(os.Getenv(EnvDir), "backend.log")}
	tools, err := crashCatalog(b)
	if err != nil {
		return nil, err
	}
	s := Instrument(stores, h)
	return react.New(react.Config{
		Model:        react.ModelFunc(func(_ context.Context, req react.Request) (react.Response, error) { return crashAgent(req), nil }),
		Tools:        tools,
		Observer:     react.DiscardObserver,
		Guards:       &guard.Options{Ledger: s.Ledger, Approvals: s.Approvals, WriteLedger: s.WriteLedger},
		Claims:       s.Claims,
		Runs:         s.Runs,
		Audit:        s.Audit,
		SnapshotKeys: [][]byte{key},
		NewRunID:     func(context.Context) string { return newID() },
	})
}

// crashChild runs the crash, recover and failover roles.
func crashChild(ctx context.Context, stores Stores, role string, out io.Writer) error {
	dir, run := os.Getenv(EnvDir), os.Getenv(EnvRun)
	h := &Hook{Claimed: claimLog(dir), Kill: func() {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}}
	if role == RoleCrash {
		h.At, _ = strconv.Atoi(os.Getenv(EnvCrashAt))
		h.After = os.Getenv(EnvCrashAfter) == "1"
	}
	if role == RoleFailover {
		return failoverLoad(ctx, stores, h, out)
	}
	loop, err := crashLoop(stores, h, func() string { return run })
	if err != nil {
		return err
	}
	switch role {
	case RoleCrash:
		res, err := loop.Run(ctx, CrashNode, "Create the Spring Sale site in sp-42.")
		if err != nil || res.Status != react.Suspended {
			return fmt.Errorf("run: %s, %w; want suspended for approval", res.Status, err)
		}
		res, err = loop.ResumeRun(ctx, run, react.Approve(res.Suspension.Ticket))
		if err != nil || res.Status != react.Finished {
			return fmt.Errorf("resume: %s, %w; want finished", res.Status, err)
		}
		_, _ = fmt.Fprintf(out, "calls %s\n", strings.Join(h.Ops(), ","))
		return nil
	case RoleRecover:
		deadline := 30 * time.Second
		if d, err := time.ParseDuration(os.Getenv(EnvDeadline)); err == nil {
			deadline = d
		}
		r := recovery{loop: loop, runs: stores.Runs, run: run, key: CrashKey(run), dir: dir, deadline: time.Now().Add(deadline)}
		if err := r.bringToEnd(ctx, react.Result{}); err != nil {
			return err
		}
		_, _ = fmt.Fprintf(out, "recovered steps=%d approvals=%d reruns=%d\n", r.steps, r.approvals, r.reruns)
		return nil
	}
	return fmt.Errorf("unknown role %q", role)
}

// recovery brings one run to its end as a host does after a crash or a
// store failure: it resumes the run the run store holds (or the snapshot
// it has when the store has none), with the decision its stop asks for,
// and retries on errors until the deadline.
type recovery struct {
	loop     *react.Loop
	runs     runstore.Store
	run, key string
	dir      string
	deadline time.Time

	steps, approvals, reruns int
	history                  []string
	approved                 map[[32]byte]bool // the approval stops approved
}

// approval notes that the host approves the stop of snapshot: approvals
// counts the distinct stops for approval (a decision delivered again for
// the same stop is not asked again).
func (r *recovery) approval(snapshot []byte) {
	if r.approved == nil {
		r.approved = map[[32]byte]bool{}
	}
	h := sha256.Sum256(snapshot)
	if !r.approved[h] {
		r.approved[h] = true
		r.approvals++
	}
}

// decision returns the decision a stop of kind asks for, naming the
// suspension of snapshot as an inbox does (Loop.Inspect).
func decision(loop *react.Loop, snapshot []byte, kind runstore.Kind) react.Decision {
	var ticket string
	if p, err := loop.Inspect(context.Background(), snapshot); err == nil && p.Suspension != nil {
		ticket = p.Suspension.Ticket
	}
	switch kind {
	case runstore.Interrupted:
		return react.Continue()
	case runstore.FollowUp:
		return react.Answer(ticket, "Check it again.")
	case runstore.Approval:
	}
	return react.Approve(ticket)
}

// kindOf returns the kind of stop of a result.
func kindOf(res react.Result) runstore.Kind {
	switch {
	case res.Status == react.Interrupted:
		return runstore.Interrupted
	case res.Suspension != nil && res.Suspension.Kind == react.SuspendFollowUp:
		return runstore.FollowUp
	}
	return runstore.Approval
}

// bringToEnd drives the run from last (the latest result this host has;
// zero when it has none) until it finished.
func (r *recovery) bringToEnd(ctx context.Context, last react.Result) error {
	wait := 20 * time.Millisecond
	var lastErr error
	for {
		if time.Now().After(r.deadline) {
			return fmt.Errorf("run %s not finished after %d steps (last %s, last error: %w; history: %s)", r.run, r.steps, last.Status, lastErr, strings.Join(r.history, " | "))
		}
		r.steps++
		res, err := r.step(ctx, last)
		if err != nil {
			lastErr = err
		}
		if len(r.history) < 12 {
			r.history = append(r.history, fmt.Sprintf("%s %d %v", res.Status, len(res.Snapshot), err))
		}
		if err == nil && res.Status == react.Finished {
			return nil
		}
		if err == nil && res.Status == react.Failed {
			return fmt.Errorf("run %s failed: %v", r.run, res.Failure)
		}
		if len(res.Snapshot) > 0 {
			last = res
		}
		if err != nil {
			time.Sleep(wait)
			wait = min(2*wait, 500*time.Millisecond)
			continue
		}
		wait = 20 * time.Millisecond
	}
}

// step makes one attempt.
func (r *recovery) step(ctx context.Context, last react.Result) (react.Result, error) {
	rec, ok, err := r.runs.Get(ctx, r.run)
	if err != nil {
		return react.Result{}, err
	}
	if ok {
		if rec.Kind == runstore.Approval {
			r.approval(rec.Snapshot)
		}
		res, err := r.loop.Resume(ctx, rec.Snapshot, decision(r.loop, rec.Snapshot, rec.Kind))
		if errors.Is(err, react.ErrAlreadyResumed) && len(last.Snapshot) > 0 {
			// The stored stop is spent (its resume stopped again but could
			// not save): go on from the snapshot this host holds.
			return r.resumeLast(ctx, last)
		}
		return res, err
	}
	// Nothing stored (a save or delete that failed is redone before the
	// store answers Get): the run ended once its write applied (the agent
	// finishes right after it), or it never stopped and the host holds
	// its last snapshot, or it never stopped at all.
	keys, err := Executions(r.dir)
	if err != nil {
		return react.Result{}, err
	}
	for _, k := range keys {
		if k == r.key {
			return react.Result{Status: react.Finished}, nil
		}
	}
	if len(last.Snapshot) > 0 {
		return r.resumeLast(ctx, last)
	}
	// It never stopped: the host runs the request again.
	r.reruns++
	return r.loop.Run(ctx, CrashNode, "Create the Spring Sale site in sp-42.")
}

func (r *recovery) resumeLast(ctx context.Context, last react.Result) (react.Result, error) {
	k := kindOf(last)
	if k == runstore.Approval {
		r.approval(last.Snapshot)
	}
	return r.loop.Resume(ctx, last.Snapshot, decision(r.loop, last.Snapshot, k))
}

// FailoverReport is what a failover load child prints.
type FailoverReport struct {
	Finished  int      `json:"finished"`
	Failed    []string `json:"failed,omitempty"`
	Steps     int      `json:"steps"`     // attempts (Run, Resume) past the first Run of each run
	Approvals int      `json:"approvals"` // stops for approval the host approved, the first of each run included
	Reruns    int      `json:"reruns"`    // runs started again because they never stopped
	// Duplicates are the resumes of the other processes' runs this
	// process made and that claimed a snapshot (a host's retried approval
	// delivered to another replica).
	Duplicates int     `json:"duplicates"`
	Seconds    float64 `json:"seconds"`
}

// failoverLoad drives EnvRuns runs at once, each to its end whatever the
// store does meanwhile (a restart, dropped sessions), retrying as a host
// would: a Run or Resume that fails is resumed again from the run store or
// from the snapshot the host holds.
func failoverLoad(ctx context.Context, stores Stores, h *Hook, out io.Writer) error {
	n, err := strconv.Atoi(os.Getenv(EnvRuns))
	if err != nil {
		return fmt.Errorf("%s: %w", EnvRuns, err)
	}
	deadline := 2 * time.Minute
	if d, err := time.ParseDuration(os.Getenv(EnvDeadline)); err == nil {
		deadline = d
	}
	conc := n
	if c, err := strconv.Atoi(os.Getenv(EnvConcurrency)); err == nil && c > 0 {
		conc = c
	}
	sem := make(chan struct{}, conc)
	dir, prefix := os.Getenv(EnvDir), os.Getenv(EnvRun)
	start := time.Now()
	var rep FailoverReport
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		run := prefix + "-" + strconv.Itoa(i+1)
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			loop, err := crashLoop(stores, h, func() string { return run })
			r := &recovery{loop: loop, runs: stores.Runs, run: run, key: CrashKey(run), dir: dir, deadline: start.Add(deadline)}
			if err == nil {
				var res react.Result
				res, err = loop.Run(ctx, CrashNode, "Create the Spring Sale site in sp-42.")
				if err != nil || res.Status != react.Finished {
					// The user takes a moment to approve: the other
					// process's duplicate delivery may come first.
					time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
					err = r.bringToEnd(ctx, res)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			rep.Steps += r.steps
			rep.Approvals += r.approvals
			rep.Reruns += r.reruns
			if err != nil {
				rep.Failed = append(rep.Failed, err.Error())
				return
			}
			rep.Finished++
		})
	}
	// Meanwhile, deliver the approvals of the other processes' runs again,
	// as a host's retried request that lands on another replica does.
	stop := make(chan struct{})
	var dups sync.WaitGroup
	if peers := os.Getenv(EnvPeers); peers != "" {
		dups.Go(func() { rep.Duplicates = duplicate(ctx, stores, h, strings.Split(peers, ","), n, stop) })
	}
	wg.Wait()
	close(stop)
	dups.Wait()
	rep.Seconds = time.Since(start).Seconds()
	return json.NewEncoder(out).Encode(rep)
}

// EnvPeers names the run prefixes of the other failover load processes,
// comma-separated.
const EnvPeers = "REACTGUARD_STORETEST_PEERS"

// duplicate resumes, again and again until stop, each stopped run of the
// peers' (runs runs each) with the decision its stop asks for, and returns
// how many of these resumes were accepted (claimed a snapshot).
func duplicate(ctx context.Context, stores Stores, h *Hook, peers []string, runs int, stop <-chan struct{}) int {
	loop, err := crashLoop(stores, h, func() string { return "" })
	if err != nil {
		return 0
	}
	accepted := 0
	for {
		for _, p := range peers {
			for i := range runs {
				select {
				case <-stop:
					return accepted
				default:
				}
				run := p + "-" + strconv.Itoa(i+1)
				rec, ok, err := stores.Runs.Get(ctx, run)
				if err != nil || !ok {
					continue
				}
				if _, err := loop.Resume(ctx, rec.Snapshot, decision(loop, rec.Snapshot, rec.Kind)); !errors.Is(err, react.ErrAlreadyResumed) {
					accepted++
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Package storetest is the shared test support of the durable stores
// (stores/postgres, stores/sqlite): scenarios that start real OS processes
// (the store's own test binary, re-executed) against one database and
// check, through the public API as a service uses it, that an approved
// write runs exactly once across processes, that a resume killed with
// SIGKILL loses no approval (the next process resumes the same run,
// takes the dead resume's claim over, and finds the write uncertain and
// verifies it, or runs it once with the approval left unused), that a
// process killed at any store call of a run, its resume or the approved
// write leaves nothing lost, stuck or run twice ([CrashPoints], over
// [Instrument]), that runs driven through a server's restarts by several
// processes finish with every write once ([FailoverLoad]), that a holder
// whose sessions are ended keeps its write ([TerminatedMidWrite]), that a
// task of several steps stopped in its step 2 is resumed once across
// processes, its step's input read from the store ([TaskAcrossProcesses]),
// that retention keeps what a valid snapshot needs ([Retention]), and how long
// guarded calls take beside the database's floor ([DurablePath], [Runs]).
//
// A store's TestMain calls [Main] first, so that the binary runs a child
// role when the scenario asks for one:
//
//	func TestMain(m *testing.M) {
//		if code, ok := storetest.Main(openStores); ok {
//			os.Exit(code)
//		}
//		…
//	}
package storetest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/threadstore"
	"github.com/reactguard/reactguard/tool"
)

// SkipShort skips t under go test -short: the fault, failover and load
// runs of a store (a process killed at every crash point, a server
// restarted or its sessions ended, a killed child's lease waited out, a
// thousand messages), which take most of a store's test time. Mutation
// testing runs each store's tests with -short (.ci/mutate, see
// docs/mutation.md), so that every mutant still meets the conformance
// kits and the store's tests of its guarantees, in seconds instead of a
// minute; make test and CI run without -short, so every run is kept there.
// what says which run is skipped.
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: " + what + " (runs without -short)")
	}
}

// The environment of a child process.
const (
	EnvRole     = "REACTGUARD_STORETEST_ROLE"     // the child's role; unset in the test process
	EnvLocation = "REACTGUARD_STORETEST_LOCATION" // the store's DSN or file
	EnvDir      = "REACTGUARD_STORETEST_DIR"      // the directory of the backend's log
	EnvRun      = "REACTGUARD_STORETEST_RUN"      // the run id
	EnvVerify   = "REACTGUARD_STORETEST_VERIFY"   // "1": create_site has a Verify
	EnvRuns     = "REACTGUARD_STORETEST_RUNS"     // load: runs of this process
)

// The roles of a child process.
const (
	RoleSuspend     = "suspend"      // run the node until it asks for approval
	RoleResume      = "resume"       // approve the stored run (ResumeRun)
	RoleApprove     = "approve"      // approve the snapshot the suspending child wrote (Resume)
	RoleAnswer      = "answer"       // answer the stored run's follow-up (ResumeRun)
	RoleResumeBlock = "resume-block" // approve (ResumeRun); create_site applies the write, says "applied" and blocks
	RoleApproveHang = "approve-hang" // approve (ResumeRun); the model says "approved" and blocks before the write
	RoleRerun       = "rerun"        // run the node again under the same run id, calling create_site at once
	RoleLoad        = "load"         // many runs at once: run, suspend, approve, finish
	RoleResumeHold  = "resume-hold"  // approve (ResumeRun); create_site applies the write, says "applied" and waits for the run's release file, then returns
)

// Stores are the parts of one durable store a child wires into its loop.
type Stores struct {
	Ledger      evidence.Ledger
	Approvals   guard.Approvals
	WriteLedger guard.WriteLedger
	Claims      runstore.Claims
	Runs        runstore.Store
	Audit       runstore.Audit
	Threads     threadstore.Store
	// Close closes the store.
	Close func()
}

// Opener opens the stores at location (a DSN or a file), migrated. role
// names the child (a store may tag its sessions with it).
type Opener func(ctx context.Context, location, role string) (Stores, error)

// key seals the snapshots of every child: they must resume each other's.
var key = []byte("storetest snapshot key, 32 bytes or more, shared by the children")

// Node is the node of every scenario.
var Node = react.Node{Name: "storetest", Instructions: "Create the site the user asks for.", Tools: []string{"create_site"}, MaxRounds: 10}

// CreateArgs are the arguments of every create_site call.
const CreateArgs = `{"name":"Spring Sale","space_id":"sp-42"}`

// Main runs the child role named by EnvRole and returns its exit code and
// true; without EnvRole it returns false and does nothing. A child prints
// its answer on stdout as one line (see the roles).
func Main(open Opener) (int, bool) {
	role := os.Getenv(EnvRole)
	if role == "" {
		return 0, false
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := child(ctx, open, role, os.Stdout); err != nil {
		_, _ = fmt.Fprintf(os.Stdout, "error %v\n", err)
		return 1, true
	}
	return 0, true
}

// backend is the system behind create_site, shared by the processes: a log
// file with one line per execution, "<idempotency key> <pid>", appended
// with O_APPEND.
type backend struct{ path string }

func (b backend) apply(key string) (map[string]string, error) {
	f, err := os.OpenFile(b.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if _, err := fmt.Fprintf(f, "%s %d\n", key, os.Getpid()); err != nil {
		return nil, err
	}
	return site(key), nil
}

func site(key string) map[string]string {
	return map[string]string{"site_id": "site-" + strings.TrimPrefix(key, "rg-")[:8]}
}

// Executions returns the keys of the executions in the log at dir, in
// order.
func Executions(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "backend.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if k, _, ok := strings.Cut(line, " "); ok {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

func (b backend) verify(_ context.Context, key string) (tool.WriteStatus, any, error) {
	keys, err := Executions(filepath.Dir(b.path))
	if err != nil {
		return tool.WriteUnknown, nil, err
	}
	for _, k := range keys {
		if k == key {
			return tool.WriteApplied, site(key), nil
		}
	}
	return tool.WriteNotApplied, nil, nil
}

// catalog returns create_site over b; block makes it block after applying
// the write, once it said "applied" on out; hold makes it wait, after
// saying so, until the file hold exists, and then return.
func catalog(b backend, verify, block bool, hold string, out io.Writer) (*tool.Catalog, error) {
	create := tool.New("create_site", "Create a website.", func(context.Context, createInput) (any, error) { return nil, nil })
	create.Effect = tool.Write
	create.Func = func(ctx context.Context, req tool.Request) (any, error) {
		res, err := b.apply(req.IdempotencyKey)
		if err != nil || (!block && hold == "") {
			return res, err
		}
		_, _ = fmt.Fprintln(out, "applied")
		if hold != "" {
			for {
				if _, err := os.Stat(hold); err == nil {
					return res, nil
				}
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
		<-ctx.Done() // the reply never comes: the process is killed here
		return nil, ctx.Err()
	}
	if verify {
		create.Verify = b.verify
	}
	return tool.NewCatalog(create)
}

// createInput is the input of create_site.
type createInput struct {
	Name    string `json:"name"`
	SpaceID string `json:"space_id"`
}

// agent is the scripted model: create the site (c3), ask for approval
// (c4), create it again once approved (c5). When c5 did not succeed (its
// result must be verified first), ask the user what to do (c6) and, once
// answered, create it again (c7). Finish (c8).
func agent(req react.Request) react.Response {
	answered := func(id string) bool { _, ok := reacttest.ToolMessage(req, id); return ok }
	switch {
	case !answered("c3"):
		return reacttest.Turn("Creating the site.", reacttest.Call("c3", "create_site", CreateArgs))
	case !answered("c4"):
		return reacttest.Calls(reacttest.Approval("c4", "create_site", "create Spring Sale in sp-42"))
	case !answered("c5"):
		return reacttest.Calls(reacttest.Call("c5", "create_site", CreateArgs))
	}
	if m, _ := reacttest.ToolMessage(req, "c5"); m.IsError {
		switch {
		case !answered("c6"):
			return reacttest.Calls(reacttest.FollowUp("c6", "Creating the site has not been verified yet. What should I do?"))
		case !answered("c7"):
			return reacttest.Calls(reacttest.Call("c7", "create_site", CreateArgs))
		}
	}
	return reacttest.Calls(reacttest.Finish("c8", "created"))
}

// rerunAgent calls create_site once (c3) and finishes.
func rerunAgent(req react.Request) react.Response {
	if _, ok := reacttest.ToolMessage(req, "c3"); !ok {
		return reacttest.Calls(reacttest.Call("c3", "create_site", CreateArgs))
	}
	return reacttest.Calls(reacttest.Finish("c8", "done"))
}

// verdicts records the verdict of each catalog call and how long it took.
type verdicts struct {
	mu    sync.Mutex
	calls []react.ToolEvent
}

// Observe records the verdicts of catalog calls.
func (v *verdicts) Observe(ctx context.Context, ev react.Event) context.Context {
	if ev.Kind != react.EventToolInvoked || ev.Tool.Builtin {
		return ctx
	}
	v.mu.Lock()
	v.calls = append(v.calls, *ev.Tool)
	v.mu.Unlock()
	return ctx
}

func (v *verdicts) of(tool string) []react.ToolEvent {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []react.ToolEvent
	for _, e := range v.calls {
		if e.Tool == tool {
			out = append(out, e)
		}
	}
	return out
}

func child(ctx context.Context, open Opener, role string, out io.Writer) error {
	stores, err := open(ctx, os.Getenv(EnvLocation), role)
	if err != nil {
		return err
	}
	defer stores.Close()
	if strings.HasPrefix(role, RoleConversation) {
		return conversation(ctx, stores, os.Stdin, out)
	}
	switch role {
	case RoleCrash, RoleRecover, RoleFailover:
		return crashChild(ctx, stores, role, out)
	case RoleTaskSuspend, RoleTaskApprove, RoleTaskRerun:
		return taskChild(ctx, stores, role, out)
	}
	b := backend{path: filepath.Join(os.Getenv(EnvDir), "backend.log")}
	var hold string
	if role == RoleResumeHold {
		hold = filepath.Join(os.Getenv(EnvDir), os.Getenv(EnvRun)+".release")
	}
	tools, err := catalog(b, os.Getenv(EnvVerify) == "1", role == RoleResumeBlock, hold, out)
	if err != nil {
		return err
	}
	obs := &verdicts{}
	model := react.ModelFunc(func(_ context.Context, req react.Request) (react.Response, error) { return agent(req), nil })
	switch role {
	case RoleRerun:
		model = func(_ context.Context, req react.Request) (react.Response, error) { return rerunAgent(req), nil }
	case RoleApproveHang:
		model = func(ctx context.Context, req react.Request) (react.Response, error) {
			if _, ok := reacttest.ToolMessage(req, "c5"); !ok {
				// The approval applied (c4 is answered); the process is
				// killed before it calls create_site.
				_, _ = fmt.Fprintln(out, "approved")
				<-ctx.Done()
				return react.Response{}, ctx.Err()
			}
			return agent(req), nil
		}
	}
	run := os.Getenv(EnvRun)
	newID := func(context.Context) string { return run }
	if role == RoleLoad {
		var n atomic.Int64
		newID = func(context.Context) string { return run + "-" + strconv.FormatInt(n.Add(1), 10) }
	}
	runs := stores.Runs
	if role == RoleRerun {
		runs = nil // the run's stored stop stays for the resumes to come
	}
	loop, err := react.New(react.Config{
		Model: model, Tools: tools, Observer: obs,
		Guards:       &guard.Options{Ledger: stores.Ledger, Approvals: stores.Approvals, WriteLedger: stores.WriteLedger},
		Claims:       stores.Claims,
		Runs:         runs,
		Audit:        stores.Audit,
		SnapshotKeys: [][]byte{key},
		NewRunID:     newID,
	})
	if err != nil {
		return err
	}
	switch role {
	case RoleSuspend:
		res, err := loop.Run(ctx, Node, "Create the Spring Sale site in sp-42.")
		if err != nil {
			return err
		}
		if res.Status != react.Suspended || res.Suspension == nil || res.Suspension.Kind != react.SuspendApproval {
			return fmt.Errorf("run ended %s; want suspended for approval", res.Status)
		}
		if err := os.WriteFile(filepath.Join(os.Getenv(EnvDir), run+".snapshot"), res.Snapshot, 0o600); err != nil {
			return err
		}
		_, _ = fmt.Fprintln(out, "suspended")
	case RoleResume, RoleResumeBlock, RoleResumeHold, RoleApproveHang, RoleApprove, RoleAnswer:
		var res react.Result
		var err error
		switch role {
		case RoleApprove:
			snap, rerr := os.ReadFile(filepath.Join(os.Getenv(EnvDir), run+".snapshot"))
			if rerr != nil {
				return rerr
			}
			p, perr := loop.Inspect(ctx, snap)
			if perr != nil {
				return perr
			}
			if p.Suspension == nil {
				return fmt.Errorf("run %s waits for no decision: it was interrupted", run)
			}
			res, err = loop.Resume(ctx, snap, react.Approve(p.Suspension.Ticket))
		case RoleAnswer:
			p, perr := loop.Pending(ctx, run)
			if perr != nil {
				return perr
			}
			if p.Suspension == nil {
				return fmt.Errorf("run %s waits for no decision: it was interrupted", run)
			}
			res, err = loop.ResumeRun(ctx, run, react.Answer(p.Suspension.Ticket, "Check it again."))
		default:
			// As an inbox does: read what the run waits for from its
			// sealed snapshot, and approve exactly that.
			p, perr := loop.Pending(ctx, run)
			if perr != nil {
				return perr
			}
			if p.Suspension == nil {
				// Stored Interrupted (its process lost its lease before the
				// suspension was sealed): nothing to approve.
				return fmt.Errorf("run %s waits for no decision: it was interrupted", run)
			}
			res, err = loop.ResumeRun(ctx, run, react.Approve(p.Suspension.Ticket))
		}
		switch {
		case errors.Is(err, react.ErrAlreadyResumed):
			_, _ = fmt.Fprintln(out, "already-resumed")
		case err != nil:
			return err
		default:
			// The status, then the verdict of every create_site call this
			// process made.
			answer := strings.ToLower(res.Status.String())
			for _, e := range obs.of("create_site") {
				answer += fmt.Sprintf(" create_site %s %s", e.Outcome, codeName(e.Code))
			}
			_, _ = fmt.Fprintln(out, answer)
		}
	case RoleRerun:
		if _, err := loop.Run(ctx, Node, "Create the Spring Sale site in sp-42."); err != nil {
			return err
		}
		calls := obs.of("create_site")
		if len(calls) != 1 {
			return fmt.Errorf("create_site was called %d times; want 1", len(calls))
		}
		_, _ = fmt.Fprintf(out, "create_site %s %s\n", calls[0].Outcome, codeName(calls[0].Code))
	case RoleLoad:
		return load(ctx, loop, obs, out)
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	return nil
}

func codeName(c errcode.Code) string {
	if c == 0 {
		return "-"
	}
	return c.String()
}

// LoadReport is what a load child prints: the outcome of its runs and the
// duration of every guarded call, in microseconds.
type LoadReport struct {
	Finished   int      `json:"finished"`
	Failed     []string `json:"failed,omitempty"`
	Durations  []int64  `json:"durations_us"`
	Executions int      `json:"create_site_success"`
}

// load drives EnvRuns runs at once, each run to its approval, approved by
// ResumeRun, to its end.
func load(ctx context.Context, loop *react.Loop, obs *verdicts, out io.Writer) error {
	n, err := strconv.Atoi(os.Getenv(EnvRuns))
	if err != nil {
		return fmt.Errorf("%s: %w", EnvRuns, err)
	}
	var mu sync.Mutex
	var rep LoadReport
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			err := func() error {
				res, err := loop.Run(ctx, Node, "Create the Spring Sale site in sp-42.")
				if err != nil {
					return err
				}
				if res.Status != react.Suspended {
					return fmt.Errorf("run %s: %s before approval", res.Run, res.Status)
				}
				res, err = loop.ResumeRun(ctx, res.Run, react.Approve(res.Suspension.Ticket))
				if err != nil {
					return err
				}
				if res.Status != react.Finished {
					return fmt.Errorf("run %s: %s after approval", res.Run, res.Status)
				}
				return nil
			}()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				rep.Failed = append(rep.Failed, err.Error())
				return
			}
			rep.Finished++
		})
	}
	wg.Wait()
	obs.mu.Lock()
	for _, e := range obs.calls {
		rep.Durations = append(rep.Durations, e.Duration.Microseconds())
		if e.Tool == "create_site" && e.Outcome == outcome.Success {
			rep.Executions++
		}
	}
	obs.mu.Unlock()
	return json.NewEncoder(out).Encode(rep)
}

// ReadLine reads one line from r, or fails after d.
func ReadLine(r *bufio.Reader, d time.Duration) (string, error) {
	type line struct {
		s   string
		err error
	}
	ch := make(chan line, 1)
	go func() {
		s, err := r.ReadString('\n')
		ch <- line{strings.TrimSpace(s), err}
	}()
	select {
	case l := <-ch:
		return l.s, l.err
	case <-time.After(d):
		return "", fmt.Errorf("no line after %v", d)
	}
}

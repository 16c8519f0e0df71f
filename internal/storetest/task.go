package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/task"
	"github.com/reactguard/reactguard/tool"
)

// The roles of the task scenario's children.
const (
	RoleTaskSuspend = "task-suspend" // run the task until its step 2 asks for approval
	RoleTaskApprove = "task-approve" // approve the stopped step's snapshot (task.Runner.Resume)
	RoleTaskRerun   = "task-rerun"   // approve the stopped step by its run id (task.Runner.ResumeRun)
)

// taskDef is the scenario's task: step find reads the space (find_space)
// and hands its id on, step create creates the site there (create_site,
// its space_id taken from step find only, with approval), then the
// answer.
var taskDef = task.Task{
	Name: "storetest-site",
	Steps: []task.Step{
		{Name: "find", Node: react.Node{Instructions: "STEP find: find the space", Tools: []string{"find_space"},
			Outputs: []react.Output{{Key: "space_id", Required: true, Field: "space_id"}}}, Next: []task.Edge{{To: "create", When: task.OnStatus(react.StepSatisfied)}}},
		{Name: "create", Node: react.Node{Instructions: "STEP create: create the site", Tools: []string{"create_site"},
			Outputs: []react.Output{{Key: "site_id", Required: true, Field: "site_id"}}}},
	},
	Final: &task.Step{Name: "answer", Node: react.Node{Instructions: "STEP answer: tell the user"}},
}

// taskOwner is the person whose task it is, in every process.
var taskOwner = react.WithOwner(react.Owner{Tenant: "acme", User: "alice"})

var siteID = regexp.MustCompile(`site-[0-9a-zA-Z]+`)

// taskAgent is the scripted model of the task, by step (the node's
// instructions open the system message).
func taskAgent(req react.Request) react.Response {
	answered := func(id string) bool { _, ok := reacttest.ToolMessage(req, id); return ok }
	step := strings.TrimPrefix(req.Messages[0].Content, "STEP ")
	switch {
	case strings.HasPrefix(step, "find"):
		switch {
		case !answered("f1"):
			return reacttest.Calls(reacttest.Call("f1", "find_space", `{"name":"Spring"}`))
		case !answered("f2"):
			return reacttest.Calls(reacttest.OutputSet("f2", "space_id", "sp-42", react.SourceToolResult, "f1"))
		}
		return reacttest.Calls(reacttest.Finish("f3", "found sp-42"))
	case strings.HasPrefix(step, "create"):
		switch {
		case !answered("c3"):
			return reacttest.Calls(reacttest.Call("c3", "create_site", CreateArgs))
		case !answered("c4"):
			return reacttest.Calls(reacttest.Approval("c4", "create_site", "create Spring Sale in sp-42"))
		case !answered("c5"):
			return reacttest.Calls(reacttest.Call("c5", "create_site", CreateArgs))
		case !answered("c6"):
			m, _ := reacttest.ToolMessage(req, "c5")
			return reacttest.Calls(reacttest.OutputSet("c6", "site_id", siteID.FindString(m.Content), react.SourceToolResult, "c5"))
		}
		return reacttest.Calls(reacttest.Finish("c7", "created"))
	}
	return reacttest.Calls(reacttest.Finish("a1", "The Spring Sale site is created in sp-42."))
}

// taskChild runs a role of the task scenario.
func taskChild(ctx context.Context, stores Stores, role string, out io.Writer) error {
	b := backend{path: filepath.Join(os.Getenv(EnvDir), "backend.log")}
	find := tool.New("find_space", "Find a space by name.", func(context.Context, struct {
		Name string `json:"name"`
	}) (map[string]string, error) {
		return map[string]string{"space_id": "sp-42"}, nil
	})
	find.Effect = tool.Read
	create := tool.New("create_site", "Create a website.", func(context.Context, createInput) (any, error) { return nil, nil })
	create.Effect = tool.Write
	create.Params = map[string]tool.Source{"space_id": tool.Step("find", "space_id")}
	create.Func = func(_ context.Context, req tool.Request) (any, error) { return b.apply(req.IdempotencyKey) }
	tools, err := tool.NewCatalog(find, create)
	if err != nil {
		return err
	}
	run := os.Getenv(EnvRun)
	var n atomic.Int64
	loop, err := react.New(react.Config{
		Model:        react.ModelFunc(func(_ context.Context, req react.Request) (react.Response, error) { return taskAgent(req), nil }),
		Tools:        tools,
		Observer:     react.DiscardObserver,
		Guards:       &guard.Options{Ledger: stores.Ledger, Approvals: stores.Approvals, WriteLedger: stores.WriteLedger},
		Claims:       stores.Claims,
		Runs:         stores.Runs,
		Audit:        stores.Audit,
		SnapshotKeys: [][]byte{key},
		// Each step is a run of its own: ids unique across processes.
		NewRunID: func(context.Context) string {
			return run + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(n.Add(1), 10)
		},
	})
	if err != nil {
		return err
	}
	runner, err := task.New(loop, taskDef, nil)
	if err != nil {
		return err
	}
	dir := os.Getenv(EnvDir)
	var res task.Result
	switch role {
	case RoleTaskSuspend:
		res, err = runner.Run(ctx, "Create the Spring Sale site in the Spring space.", taskOwner)
		if err != nil {
			return err
		}
		if res.Status != task.Suspended || res.Step != "create" || res.Suspension.Kind != react.SuspendApproval {
			return fmt.Errorf("task ended %s at step %s; want suspended for approval in step create", res.Status, res.Step)
		}
		if err := os.WriteFile(filepath.Join(dir, run+".snapshot"), res.Snapshot, 0o600); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, run+".run"), []byte(res.Run), 0o600); err != nil {
			return err
		}
		_, _ = fmt.Fprintln(out, "suspended")
		return nil
	case RoleTaskApprove:
		snap, rerr := os.ReadFile(filepath.Join(dir, run+".snapshot"))
		if rerr != nil {
			return rerr
		}
		p, perr := loop.Inspect(ctx, snap, taskOwner)
		if perr != nil {
			return perr
		}
		res, err = runner.Resume(ctx, snap, react.Approve(p.Suspension.Ticket).DecidedBy("alice"), taskOwner)
	case RoleTaskRerun:
		id, rerr := os.ReadFile(filepath.Join(dir, run+".run"))
		if rerr != nil {
			return rerr
		}
		p, perr := loop.Pending(ctx, string(id), taskOwner)
		if perr != nil {
			return perr
		}
		res, err = runner.ResumeRun(ctx, string(id), react.Approve(p.Suspension.Ticket).DecidedBy("alice"), taskOwner)
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	if errors.Is(err, react.ErrAlreadyResumed) {
		_, _ = fmt.Fprintln(out, "already-resumed")
		return nil
	}
	if err != nil {
		return err
	}
	// The task's status, then each step run and its status.
	answer := res.Status.String()
	for _, s := range res.Steps {
		answer += " " + s.Step + "=" + s.Status.String()
	}
	_, _ = fmt.Fprintln(out, answer)
	return nil
}

// TaskAcrossProcesses runs a task of two steps and an answer in one
// process until its step 2 stops for the approval of a write, then starts
// procs processes at once that each approve the stopped step's snapshot
// (task.Runner.Resume): exactly one resumes it — step 2's input from step
// 1 read from the store's evidence, the write run once — and ends the
// task met; every other one gets react.ErrAlreadyResumed and runs
// nothing. Approving the step again by its run id (task.Runner.ResumeRun)
// finds no stopped run: it finished.
func TaskAcrossProcesses(t *testing.T, p Processes, procs int) {
	run := "task-" + time.Now().Format("150405.000000")
	if got := p.Run(t, RoleTaskSuspend, run); got != "suspended" {
		t.Fatalf("suspending child answered %q; want suspended", got)
	}
	if n := p.executions(t); n != 0 {
		t.Fatalf("create_site ran %d times before the approval; want 0", n)
	}
	answers := p.atOnce(t, RoleTaskApprove, run, procs)
	want := append(slices.Repeat([]string{"already-resumed"}, procs-1), "met find=satisfied create=satisfied answer=satisfied")
	slices.Sort(want)
	if !slices.Equal(answers, want) {
		t.Fatalf("%d processes approving one task's step answered %q; want one met and %d already-resumed", procs, answers, procs-1)
	}
	if n := p.executions(t); n != 1 {
		t.Fatalf("create_site ran %d times across %d processes; want exactly 1", n, procs)
	}
	if got := p.Run(t, RoleTaskRerun, run); !strings.Contains(got, "no stopped run") {
		t.Fatalf("approving the finished step again by its run id answered %q; want no stopped run", got)
	}
}

// Command tasks runs a task of several steps (package task) offline: a
// user asks an agent to find and book a hotel. The task searches (step 1),
// books what the search verified (step 2: the write needs the user's
// approval, so the task suspends and is resumed from its sealed snapshot
// by a new runner, as another process would), and answers (the final
// step, shown every step's status). Declining the booking shows partial
// success decided by the task's rule: the booking may be missing, and the
// answer must say so — an answer that hides it is refused.
//
//	go run ./examples/tasks            # the user approves: met
//	go run ./examples/tasks -decline   # the user declines: partially met
//
// The model is scripted, one script per step, so the example needs no key
// and no network; docs/tasks.md walks through it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/task"
	"github.com/reactguard/reactguard/tool"
)

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }

// key seals the snapshots; a service keeps it with its secrets.
var key = []byte("example key: never use this one in a service!")

// run is the program; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasks", flag.ContinueOnError)
	fs.SetOutput(stderr)
	decline := fs.Bool("decline", false, "the user declines the booking")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	booked := 0
	catalog := tools(&booked)
	// The stores a service shares between its processes.
	stores := &guard.Options{Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()}
	model := scripted()
	newRunner := func() *task.Runner {
		loop, err := react.New(react.Config{Model: model, Tools: catalog, Guards: stores, SnapshotKeys: [][]byte{key}, Observer: react.DiscardObserver})
		if err != nil {
			panic(err)
		}
		r, err := task.New(loop, trip(), nil)
		if err != nil {
			panic(err)
		}
		return r
	}
	owner := react.WithOwner(react.Owner{Tenant: "acme", User: "alice"})

	res, err := newRunner().Run(ctx, "Find and book a hotel in Bern for Friday.", owner)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "tasks:", err)
		return 1
	}
	_, _ = fmt.Fprintf(stdout, "task %s at step %s: %s of %s%s\n", res.Status, res.Step, res.Suspension.Kind, res.Suspension.Approval.Tool, res.Suspension.Approval.Args)
	d := react.Approve(res.Suspension.Ticket)
	if *decline {
		d = react.Decline(res.Suspension.Ticket, "too expensive")
	}
	_, _ = fmt.Fprintf(stdout, "-- the user decides (%s); a new runner resumes the sealed snapshot (%d bytes)\n", d, len(res.Snapshot))
	res, err = newRunner().Resume(ctx, res.Snapshot, d.DecidedBy("alice"), owner)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "tasks:", err)
		return 1
	}
	for _, s := range res.Steps {
		line := fmt.Sprintf("step %-6s %s", s.Step, s.Status)
		if s.Reason != "" {
			line += ": " + s.Reason
		}
		for k, v := range s.Verified {
			line += fmt.Sprintf(" (verified %s=%s)", k, v)
		}
		_, _ = fmt.Fprintln(stdout, line)
		for _, c := range s.Calls {
			if c.Tool == react.ToolFinish && c.Code != 0 {
				_, _ = fmt.Fprintf(stdout, "  an answer was refused: %s\n", c.Code)
			}
		}
	}
	_, _ = fmt.Fprintf(stdout, "task %s: %s\n", res.Status, res.Answer)
	for _, m := range res.Missing {
		_, _ = fmt.Fprintf(stdout, "missing %s (%s: %s), continue: %v\n", m.Item, m.Status, m.Why, m.Continue)
	}
	_, _ = fmt.Fprintf(stdout, "book_hotel ran %d time(s)\n", booked)
	return 0
}

// trip is the task: search, book what the search verified, answer. The
// booking may be missing (the user may decline); the answer must then say
// "not booked".
func trip() task.Task {
	return task.Task{
		Name: "trip",
		Steps: []task.Step{
			{Name: "search", Node: react.Node{Instructions: "search: find a hotel with search_hotels and set hotel_id from the result.",
				Tools: []string{"search_hotels"}, Outputs: []react.Output{{Key: "hotel_id", Required: true, Field: "hotel_id"}}},
				Next: []task.Edge{{To: "book", When: task.OnStatus(react.StepSatisfied)}}},
			{Name: "book", Node: react.Node{Instructions: "book: book the hotel the search found with book_hotel.",
				Tools: []string{"book_hotel"}, Outputs: []react.Output{{Key: "booking", Required: true, Field: "booking"}}}},
		},
		Final:      &task.Step{Name: "answer", Node: react.Node{Instructions: "answer: tell the user what was done."}},
		Acceptance: task.Acceptance{Optional: []string{"book"}, MustSay: map[string]string{"book": "not booked"}},
	}
}

// tools are the hotel tools; book_hotel's hotel_id must be the value the
// search step verified (tool.Step), never one the model writes.
func tools(booked *int) *tool.Catalog {
	search := tool.New("search_hotels", "Search hotels in a city.", func(context.Context, struct {
		City string `json:"city"`
	}) ([]map[string]any, error) {
		return []map[string]any{{"hotel_id": "h-1", "name": "Alpen", "price": 180}}, nil
	})
	search.Effect = tool.Read
	book := tool.New("book_hotel", "Book a hotel.", func(_ context.Context, in struct {
		HotelID string `json:"hotel_id"`
	}) (map[string]string, error) {
		*booked++
		return map[string]string{"booking": "b-77", "hotel_id": in.HotelID}, nil
	})
	book.Effect = tool.Write
	book.Params = map[string]tool.Source{"hotel_id": tool.Step("search", "hotel_id")}
	return tool.MustCatalog(search, book)
}

// scripted is the model: one script per step, picked by the step's
// instructions; the answer step adapts to the booking's status as a model
// reading its system message would.
func scripted() react.Model {
	turns := map[string][]react.Response{
		"search": {
			{ToolCalls: []react.ToolCall{reacttest.Call("s1", "search_hotels", `{"city":"Bern"}`)}},
			{ToolCalls: []react.ToolCall{reacttest.OutputSet("s2", "hotel_id", "h-1", react.SourceToolResult, "s1")}},
			{ToolCalls: []react.ToolCall{reacttest.Finish("s3", "found Alpen")}},
		},
		"book": {
			{ToolCalls: []react.ToolCall{reacttest.Call("b1", "book_hotel", `{"hotel_id":"h-1"}`)}},
			{ToolCalls: []react.ToolCall{reacttest.Approval("b2", "book_hotel", "book Alpen for Friday")}},
		},
	}
	return reacttest.Func(func(req react.Request) react.Response {
		sys := req.Messages[0].Content
		step, _, _ := strings.Cut(sys, ":")
		last := req.Messages[len(req.Messages)-1]
		switch {
		case step == "book" && strings.Contains(last.Content, "approved"):
			return react.Response{ToolCalls: []react.ToolCall{reacttest.Call("b3", "book_hotel", `{"hotel_id":"h-1"}`)}}
		case step == "book" && strings.Contains(last.Content, "declined"):
			return react.Response{ToolCalls: []react.ToolCall{reacttest.FailNode("b3", "the user declined the booking")}}
		case step == "book" && last.ToolCallID == "b3":
			return react.Response{ToolCalls: []react.ToolCall{reacttest.OutputSet("b4", "booking", "b-77", react.SourceToolResult, "b3")}}
		case step == "book" && last.ToolCallID == "b4":
			return react.Response{ToolCalls: []react.ToolCall{reacttest.Finish("b5", "booked")}}
		case step == "answer" && strings.Contains(sys, "- book: satisfied"):
			return react.Response{ToolCalls: []react.ToolCall{reacttest.Finish("a1", "Alpen (h-1) is booked for Friday: b-77.")}}
		case step == "answer" && last.ToolCallID == "a1":
			return react.Response{ToolCalls: []react.ToolCall{reacttest.Finish("a2", "I found Alpen (h-1) for Friday; it is not booked, as you declined.")}}
		case step == "answer":
			// A first answer that hides the missing booking: the task refuses it.
			return react.Response{ToolCalls: []react.ToolCall{reacttest.Finish("a1", "Your stay at Alpen is arranged.")}}
		}
		next := turns[step][0]
		turns[step] = turns[step][1:]
		return next
	})
}

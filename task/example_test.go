package task_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/task"
	"github.com/reactguard/reactguard/tool"
)

// A task of three steps: search a hotel, book it (the user approves), then
// answer. The booking's hotel_id must come from the search step's verified
// output: the model cannot invent it. The scripted model stands in for an
// LLM; each step's turns are picked by the step's instructions.
func ExampleRunner() {
	search := tool.New("search_hotels", "Search hotels.", func(context.Context, struct {
		City string `json:"city"`
	}) (map[string]any, error) {
		return map[string]any{"hotels": []map[string]string{{"hotel_id": "h-1", "name": "Alpen"}}}, nil
	})
	search.Effect = tool.Read
	book := tool.New("book_hotel", "Book a hotel.", func(_ context.Context, in struct {
		HotelID string `json:"hotel_id"`
	}) (map[string]string, error) {
		return map[string]string{"booking": "b-77", "hotel_id": in.HotelID}, nil
	})
	book.Effect = tool.Write
	book.Params = map[string]tool.Source{"hotel_id": tool.Step("search", "hotel_id")}

	script := map[string][]react.Response{
		"search": {
			{ToolCalls: []react.ToolCall{reacttest.Call("s1", "search_hotels", `{"city":"Bern"}`)}},
			{ToolCalls: []react.ToolCall{reacttest.OutputSet("s2", "hotel_id", "h-1", react.SourceToolResult, "s1")}},
			{ToolCalls: []react.ToolCall{reacttest.Finish("s3", "found Alpen")}},
		},
		"book": {
			{ToolCalls: []react.ToolCall{reacttest.Call("b1", "book_hotel", `{"hotel_id":"h-1"}`)}},
			{ToolCalls: []react.ToolCall{reacttest.Approval("b2", "book_hotel", "book Alpen")}},
			{ToolCalls: []react.ToolCall{reacttest.Call("b3", "book_hotel", `{"hotel_id":"h-1"}`)}},
			{ToolCalls: []react.ToolCall{reacttest.OutputSet("b4", "booking", "b-77", react.SourceToolResult, "b3")}},
			{ToolCalls: []react.ToolCall{reacttest.Finish("b5", "booked")}},
		},
		"answer": {{ToolCalls: []react.ToolCall{reacttest.Finish("a1", "Alpen is booked: b-77.")}}},
	}
	model := reacttest.Func(func(req react.Request) react.Response {
		step, _, _ := strings.Cut(req.Messages[0].Content, ":")
		next := script[step][0]
		script[step] = script[step][1:]
		return next
	})
	loop, _ := react.New(react.Config{Model: model, Tools: tool.MustCatalog(search, book), Observer: react.DiscardObserver})
	runner, err := task.New(loop, task.Task{
		Name: "trip",
		Steps: []task.Step{
			{Name: "search", Node: react.Node{Instructions: "search: find a hotel", Tools: []string{"search_hotels"},
				Outputs: []react.Output{{Key: "hotel_id", Required: true, Field: "hotels.hotel_id"}}},
				Next: []task.Edge{{To: "book", When: task.OnStatus(react.StepSatisfied)}}},
			{Name: "book", Node: react.Node{Instructions: "book: book it", Tools: []string{"book_hotel"},
				Outputs: []react.Output{{Key: "booking", Required: true, Field: "booking"}}}},
		},
		Final: &task.Step{Name: "answer", Node: react.Node{Instructions: "answer: tell the user"}},
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	res, _ := runner.Run(ctx, "Book a hotel in Bern.")
	fmt.Println(res.Status, "at step", res.Step+":", res.Suspension.Kind, string(res.Suspension.Approval.Args))
	res, _ = runner.Resume(ctx, res.Snapshot, react.Approve(res.Suspension.Ticket))
	for _, s := range res.Steps {
		fmt.Println(s.Step, s.Status)
	}
	fmt.Println(res.Status.String()+":", res.Answer)
	// Output:
	// suspended at step book: approval {"hotel_id":"h-1"}
	// search satisfied
	// book satisfied
	// answer satisfied
	// met: Alpen is booked: b-77.
}

package eval_test

import (
	"context"
	"fmt"
	"os"
	"testing/fstest"

	"github.com/reactguard/reactguard/eval"
	"github.com/reactguard/reactguard/react"
)

// Run the built-in set with each case's scripted model and read the
// total row: cases passed over cases, per layer, then end to end.
func ExampleRun() {
	rep, err := eval.Run(context.Background(), eval.Builtin(), eval.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	t := rep.Total
	fmt.Println("cases:", t.Cases)
	fmt.Println("call layer:", t.Call)
	fmt.Println("execution layer:", t.Execution)
	fmt.Println("business layer:", t.Business)
	fmt.Println("end to end:", t.EndToEnd)
	// Output:
	// cases: 52
	// call layer: 52/52 (100.0%)
	// execution layer: 52/52 (100.0%)
	// business layer: 52/52 (100.0%)
	// end to end: 52/52 (100.0%)
}

// A case of your own, as a file among others in a directory: one read
// that returns nothing, which the agent must not paper over.
func ExampleLoad() {
	fsys := fstest.MapFS{"mycases/empty-search.json": {Data: []byte(`{
  "id": "mine-empty-search",
  "category": "business_unmet",
  "title": "nothing found: say so",
  "task": "Who maintains the billing service?",
  "tools": [{"name": "search", "description": "Search the service catalog.", "effect": "read", "responses": [{"result": []}]}],
  "script": [
    {"calls": [{"id": "c1", "name": "search", "args": {"q": "billing owner"}}]},
    {"calls": [{"id": "c2", "name": "builtin_node_fail", "args": {"reason": "The catalog does not name an owner."}}]}
  ],
  "labels": {
    "calls": [{"tool": "search", "execution": "empty", "business": "insufficient", "next": ["change_args", "follow_up", "fail"]}],
    "unacceptable": ["fabricate_on_empty"],
    "expect": {"status": "failed", "goal": "unmet"}
  }
}`)}}
	cases, err := eval.Load(fsys, "mycases")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := cases[0].Run(context.Background(), nil, eval.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.ID, "end to end:", res.EndToEnd)
	fmt.Println("search:", res.Calls[0].Execution, res.Calls[0].Business)
	// Output:
	// mine-empty-search end to end: true
	// search: empty insufficient
}

// Score a misbehaving model: the variant of a case that invents a value
// after an empty search is flagged.
func ExampleCase_Run() {
	for _, c := range eval.Builtin() {
		if c.ID != "business-02-empty-no-evidence" {
			continue
		}
		v := c.Variants[0]
		res, _ := c.Variant(v).Run(context.Background(), nil, eval.Options{})
		fmt.Printf("%s: %v\n", v.Name, res.Flagged)
	}
	// Output:
	// invents a parking fee: [fabricate_on_empty]
}

// The command line of cmd/rgeval, with an extra model: a function model
// that gives up at once, run on one category.
func ExampleCommand() {
	giveUp := react.ModelFunc(func(context.Context, react.Request) (react.Response, error) {
		return react.Response{ToolCalls: []react.ToolCall{{ID: "x", Name: react.ToolFail, Args: []byte(`{"reason":"no"}`)}}}, nil
	})
	cmd := eval.Command{Name: "rgeval", Models: map[string]eval.ModelFactory{
		"give-up": func(context.Context) (react.Model, string, error) { return giveUp, "give-up", nil },
	}}
	code := cmd.Run(context.Background(), []string{"-model", "give-up", "-category", "integration_failure", "-format", "json", "-json", os.DevNull}, discard{}, os.Stdout)
	fmt.Println("exit code:", code)
	// Output:
	// exit code: 0
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

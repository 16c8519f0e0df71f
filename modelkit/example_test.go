package modelkit_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// An adapter reads its API's event stream with ReadSSE: its parse turns
// each event into chunks and recognises the end marker; a stream cut
// before it is a Truncated error, never a complete turn.
func ExampleReadSSE() {
	parse := func(ev modelkit.Event) ([]react.Chunk, bool, error) {
		if ev.Data == "[DONE]" {
			return nil, true, nil
		}
		return []react.Chunk{{Text: ev.Data}}, false, nil
	}
	for _, body := range []string{"data: Hello\n\ndata: [DONE]\n\n", "data: Hel\n\n"} {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(body))}
		var text string
		var err error
		modelkit.ReadSSE(context.Background(), "example", resp, "data: [DONE]", 0, parse, func(c react.Chunk, e error) bool {
			text, err = text+c.Text, e
			return e == nil
		})
		fmt.Printf("%q %v\n", text, modelerr.KindOf(err))
	}
	// Output:
	// "Hello" unknown
	// "Hel" truncated
}

// Turns groups a history into the alternating turns of an API that takes
// the system prompt apart; an assistant turn keeps the order its parts
// had.
func ExampleTurns() {
	history := []react.Message{
		{Role: react.RoleSystem, Content: "Be brief."},
		{Role: react.RoleUser, Content: "Look it up."},
		{Role: react.RoleAssistant, Content: "On it.Done.", ToolCalls: []react.ToolCall{{ID: "c1", Name: "search"}},
			Parts: []react.Part{{Kind: react.PartText, Text: "On it."}, {Kind: react.PartCall}, {Kind: react.PartText, Text: "Done."}}},
		{Role: react.RoleTool, ToolCallID: "c1", Content: "3 results"},
	}
	system, turns, _ := modelkit.Turns(history, "example")
	fmt.Println("system:", system)
	for _, t := range turns {
		for _, b := range t.Blocks {
			fmt.Println(t.Assistant, b.Kind, b.Text+b.Call.Name+b.Result.Content)
		}
	}
	// Output:
	// system: [Be brief.]
	// false 1 Look it up.
	// true 1 On it.
	// true 2 search
	// true 1 Done.
	// false 3 3 results
}

func ExampleEndpoint() {
	fmt.Println(modelkit.Endpoint("https://generativelanguage.googleapis.com/"))
	// Output: generativelanguage.googleapis.com 443
}

package otel

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/reactguard/reactguard/react"
)

// FuzzContent: whatever the model sent (text, ids, names, arguments that
// are not JSON, invalid UTF-8), the recorded contents are valid JSON, and
// arguments that are JSON are kept as JSON values, the others as text.
func FuzzContent(f *testing.F) {
	f.Add("hello", "c1", "list_sites", `{"page":1}`, "stop")
	f.Add("", "", "", `{`, "")
	f.Add("\xff\xfe", "id\x00", "name\"", `null`, "tool_calls")
	f.Add("text", "c2", "x", `[1,2`, "length")
	f.Add("<b>&</b>", "c3", "html", `{"q":"<a&b>"}`, "stop")
	f.Fuzz(func(t *testing.T, text, id, name, args, reason string) {
		call := react.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
		out := outputMessages(react.Response{Text: text, ToolCalls: []react.ToolCall{call}, FinishReason: reason})
		in := inputMessages([]react.Message{
			{Role: react.RoleUser, Content: text},
			{Role: react.RoleAssistant, ToolCalls: []react.ToolCall{call}},
			{Role: react.RoleTool, ToolCallID: id, Content: text},
		})
		for _, s := range []string{out, in} {
			if !json.Valid([]byte(s)) {
				t.Fatalf("not JSON: %q", s)
			}
		}
		var msgs []struct {
			Parts []struct {
				Type      string
				Arguments json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(out), &msgs); err != nil || len(msgs) != 1 {
			t.Fatalf("output messages %q: %v", out, err)
		}
		var reasons []struct {
			FinishReason *string `json:"finish_reason"`
		}
		if err := json.Unmarshal([]byte(out), &reasons); err != nil || reasons[0].FinishReason == nil || *reasons[0].FinishReason == "" {
			t.Fatalf("output messages %q without the finish_reason the schema requires", out)
		}
		for _, p := range msgs[0].Parts {
			if p.Type != "tool_call" || len(args) == 0 {
				continue
			}
			if json.Valid([]byte(args)) {
				var want, got any
				if json.Unmarshal([]byte(args), &want) != nil || json.Unmarshal(p.Arguments, &got) != nil || !reflect.DeepEqual(want, got) {
					t.Fatalf("JSON arguments %q recorded as %s; want the same JSON value", args, p.Arguments)
				}
				continue
			}
			var asText string
			if err := json.Unmarshal(p.Arguments, &asText); err != nil {
				t.Fatalf("arguments %q that are not JSON are not recorded as text: %s", args, p.Arguments)
			}
		}
	})
}

// Contents are recorded without HTML escaping.
func TestContentNotHTMLEscaped(t *testing.T) {
	got := outputMessages(react.Response{Text: "<b>&</b>", ToolCalls: []react.ToolCall{{ID: "c", Name: "q", Args: json.RawMessage(`{"q":"<a&b>"}`)}}})
	want := `[{"role":"assistant","parts":[{"type":"text","content":"<b>&</b>"},{"type":"tool_call","id":"c","name":"q","arguments":{"q":"<a&b>"}}],"finish_reason":"tool_call"}]`
	if got != want {
		t.Errorf("outputMessages = %s; want %s", got, want)
	}
}

// finish_reason is always there: the API's, or derived from the turn.
func TestOutputFinishReason(t *testing.T) {
	for _, tt := range []struct {
		resp react.Response
		want string
	}{
		{react.Response{Text: "hi", FinishReason: "end_turn"}, `"finish_reason":"end_turn"`},
		{react.Response{Text: "hi"}, `"finish_reason":"stop"`},
		{react.Response{ToolCalls: []react.ToolCall{{ID: "c", Name: "t"}}}, `"finish_reason":"tool_call"`},
		{react.Response{}, `"finish_reason":"stop"`},
	} {
		if got := outputMessages(tt.resp); !strings.Contains(got, tt.want) {
			t.Errorf("outputMessages(%+v) = %s; want %s", tt.resp, got, tt.want)
		}
	}
}

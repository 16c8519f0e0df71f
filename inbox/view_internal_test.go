package inbox

import (
	"encoding/json"
	"testing"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/tool"
)

// A value that a run of a conversation took from an earlier message is
// shown as found there, not as a value nobody gave.
func TestArgViewsEarlier(t *testing.T) {
	for _, c := range []struct {
		arg      react.Argument
		evidence string
		warn     bool
	}{
		{react.Argument{Name: "order_id", Value: json.RawMessage(`"A-17"`), Source: tool.User(), UserText: -1, Earlier: true},
			"Found in what the user wrote in an earlier message of the conversation", false},
		{react.Argument{Name: "order_id", Value: json.RawMessage(`"A-17"`), Source: tool.User(), UserText: -1},
			"Not found word for word in what the user wrote", true},
		{react.Argument{Name: "site", Value: json.RawMessage(`"s1"`), Source: tool.Result("list_sites", "id"), UserText: -1, Earlier: true},
			"Found in a list_sites result of an earlier message of the conversation", false},
		{react.Argument{Name: "site", Value: json.RawMessage(`"s1"`), Source: tool.Result("list_sites", "id"), UserText: -1},
			"Not found in any list_sites result the agent saw", true},
	} {
		v := argViews([]react.Argument{c.arg})[0]
		if v.Evidence != c.evidence || v.Warn != c.warn {
			t.Errorf("argViews(%+v) = %q, warn %v; want %q, warn %v", c.arg, v.Evidence, v.Warn, c.evidence, c.warn)
		}
	}
}

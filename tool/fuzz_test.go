package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/reactguard/reactguard/tool"
)

// FuzzNewDecode feeds arbitrary model output to a typed tool: it never
// panics, and either runs fn or returns an *ArgsError without running it.
func FuzzNewDecode(f *testing.F) {
	for _, s := range []string{``, `{}`, `null`, `{"city":"Paris","days":2}`, `{"city":1}`, `[]`, `{"city":"a"}x`, `{"cty":"a"}`, "\xff", `{"days":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		ran := false
		tl := tool.New("weather", "", func(_ context.Context, in weatherIn) (weatherOut, error) {
			ran = true
			return weatherOut{City: in.City}, nil
		})
		_, err := tl.Func(context.Background(), tool.Request{Args: json.RawMessage(args)})
		if err == nil {
			if !ran {
				t.Fatalf("Func(%q) = nil error without running fn", args)
			}
			return
		}
		var ae *tool.ArgsError
		if !errors.As(err, &ae) {
			t.Fatalf("Func(%q) error = %T %v; want *tool.ArgsError", args, err, err)
		}
		if ran {
			t.Fatalf("Func(%q) ran fn despite an argument error", args)
		}
	})
}

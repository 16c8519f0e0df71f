package anthropic

import (
	"encoding/json"
	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
)

// FuzzFromMessage feeds arbitrary response bodies through the SDK's
// decoder and the adapter's conversion: it must never panic, and a body
// with a content array must convert.
func FuzzFromMessage(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"content":[{"type":"tool_use","id":"a","name":"x","input":"not an object"}]}`))
	f.Add([]byte(`{"content":[{"type":"tool_use"},{"type":"text","text":null}]}`))
	f.Add([]byte(`{"content":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var m sdk.Message
		if err := json.Unmarshal(body, &m); err != nil {
			return
		}
		resp, err := fromMessage(&m)
		if err != nil {
			if m.JSON.Content.Valid() {
				t.Fatalf("fromMessage(%s) = %v with a content array", body, err)
			}
			return
		}
		calls := 0
		for _, p := range resp.Parts {
			if p.Kind == react.PartCall {
				if p.Call != calls {
					t.Fatalf("part %+v: want call %d in order", p, calls)
				}
				calls++
			}
		}
		if calls != len(resp.ToolCalls) {
			t.Fatalf("%d call parts for %d calls", calls, len(resp.ToolCalls))
		}
		for _, tc := range resp.ToolCalls {
			// Whatever the model sent, sending it back must be a JSON object.
			if in := modelkit.ObjectArgs(tc.Args); !json.Valid(in) || in[0] != '{' {
				t.Fatalf("ObjectArgs(%q) = %q; want a JSON object", tc.Args, in)
			}
		}
	})
}

// FuzzToolInput checks that any arguments become a JSON object input.
func FuzzToolInput(f *testing.F) {
	for _, s := range []string{`{"a":1}`, ` {"a":1} `, `[1]`, `"x"`, `{`, ``, `null`, `{"a":1}{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		in := modelkit.ObjectArgs(args)
		var obj map[string]any
		if err := json.Unmarshal(in, &obj); err != nil || obj == nil {
			t.Fatalf("ObjectArgs(%q) = %q; want a JSON object (%v)", args, in, err)
		}
	})
}

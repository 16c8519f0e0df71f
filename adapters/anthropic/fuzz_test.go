package anthropic

import (
	"encoding/json"
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
		for _, tc := range resp.ToolCalls {
			// Whatever the model sent, sending it back must be a JSON object.
			if in := toolInput(tc.Args); !json.Valid(in) || in[0] != '{' {
				t.Fatalf("toolInput(%q) = %q; want a JSON object", tc.Args, in)
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
		in := toolInput(args)
		var obj map[string]any
		if err := json.Unmarshal(in, &obj); err != nil || obj == nil {
			t.Fatalf("toolInput(%q) = %q; want a JSON object (%v)", args, in, err)
		}
	})
}

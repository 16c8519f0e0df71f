package openai

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/openai/openai-go/v3"
)

// FuzzFromCompletion feeds arbitrary response bodies through the SDK's
// decoder and the adapter's conversion: it must never panic, and every
// tool call it returns must carry a unique, non-empty id.
func FuzzFromCompletion(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "completion_*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"choices":[{"message":{"tool_calls":[{"type":"custom","custom":{"name":"x","input":"raw text"}}]}}]}`))
	f.Add([]byte(`{"choices":[{"message":{"tool_calls":[{"id":"a"},{"id":"a"},{}]}}]}`))
	f.Add([]byte(`{"choices":null}`))
	f.Add([]byte(`{"id":"X","choices":[{"message":{"tool_calls":[{"id":"call_X_1"},{"id":""}]}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var c sdk.ChatCompletion
		if err := json.Unmarshal(body, &c); err != nil {
			return
		}
		resp, err := fromCompletion(&c)
		if err != nil {
			if len(c.Choices) != 0 {
				t.Fatalf("fromCompletion(%s) = %v with %d choices", body, err, len(c.Choices))
			}
			return
		}
		ids := map[string]bool{}
		for _, tc := range resp.ToolCalls {
			if tc.ID == "" || ids[tc.ID] {
				t.Fatalf("fromCompletion(%s): tool call id %q empty or repeated", body, tc.ID)
			}
			ids[tc.ID] = true
		}
	})
}

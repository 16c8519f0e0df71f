package anthropic

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

// FuzzStream feeds arbitrary event streams through the adapter's reader:
// it must never panic, every error must be a *modelerr.Error, and a stream
// that yields no error must have ended with message_stop.
func FuzzStream(f *testing.F) {
	f.Add("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\ndata: {\"type\":\"message_stop\"}\n\n")
	f.Add("data: {\"type\":\"message_start\",\"message\":{}}\n\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"x\",\"input\":{}}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\ndata: {\"type\":\"message_stop\"}\n\n")
	f.Add("data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\r\r")
	f.Add("data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":3}}\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(body))}
		stream := func(yield func(react.Chunk, error) bool) { readStream(context.Background(), resp, yield) }
		if _, ok := chattest.CheckStream(t, stream, react.MaxStreamCalls); ok && !strings.Contains(body, "message_stop") {
			t.Fatalf("a stream without message_stop yielded no error: %q", body)
		}
	})
}

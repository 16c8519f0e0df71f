package openairesponses

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
// that yields no error must have ended with a terminal event.
func FuzzStream(f *testing.F) {
	f.Add("data: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[]}}\n\n")
	f.Add("data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"n\"}}\n\ndata: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"delta\":\"{\"}\n\n")
	f.Add("data: {\"type\":\"error\",\"code\":\"server_error\"}\n\n")
	f.Add("data: {\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"output\":[{\"type\":\"reasoning\",\"id\":\"rs\"},{\"type\":\"function_call\",\"call_id\":\"c\"}]}}\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(body))}
		stream := func(yield func(react.Chunk, error) bool) { readStream(context.Background(), resp, yield) }
		if _, ok := chattest.CheckStream(t, stream, react.MaxStreamCalls*2); ok && !strings.Contains(body, "response.completed") && !strings.Contains(body, "response.incomplete") {
			t.Fatalf("a stream without a terminal event yielded no error: %q", body)
		}
	})
}

package openai

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
// that yields no error must have ended with data: [DONE].
func FuzzStream(f *testing.F) {
	f.Add("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"t\",\"arguments\":\"{\"}}]}}]}\n\n")
	f.Add("data: {\"error\":{\"type\":\"server_error\",\"message\":\"x\"}}\n\n")
	f.Add("event: x\rdata: y\r\rdata: [DONE]\r\r")
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"a\"}},{\"index\":1023}]}}]}\n\ndata: [DONE]\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(body))}
		stream := func(yield func(react.Chunk, error) bool) { readStream(context.Background(), resp, yield) }
		if _, ok := chattest.CheckStream(t, stream, react.MaxStreamCalls); ok && !strings.Contains(body, "[DONE]") {
			t.Fatalf("a stream without [DONE] yielded no error: %q", body)
		}
	})
}

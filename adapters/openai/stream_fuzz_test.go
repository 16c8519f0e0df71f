package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/reactguard/reactguard/modelerr"
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
		var err error
		var a react.Assembler
		readStream(context.Background(), resp, func(c react.Chunk, e error) bool {
			if e != nil {
				err = e
				return false
			}
			if c.Call != nil && (c.Call.Index < 0 || c.Call.Index >= react.MaxStreamCalls) {
				t.Fatalf("call index %d out of range", c.Call.Index)
			}
			if aerr := a.Add(c); aerr != nil {
				// A call whose id or name changes: the loop reports it as a
				// model error (react.ErrMalformedStream).
				if !errors.Is(aerr, react.ErrMalformedStream) {
					t.Fatalf("the assembler: %v", aerr)
				}
				return false
			}
			return true
		})
		if err != nil {
			if _, ok := err.(*modelerr.Error); !ok { //nolint:errorlint // the adapter's own type
				t.Fatalf("error %T %v is not a *modelerr.Error", err, err)
			}
			return
		}
		if !strings.Contains(body, "[DONE]") {
			t.Fatalf("a stream without [DONE] yielded no error: %q", body)
		}
	})
}

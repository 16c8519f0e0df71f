package openairesponses

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
// that yields no error must have ended with a terminal event.
func FuzzStream(f *testing.F) {
	f.Add("data: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[]}}\n\n")
	f.Add("data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"n\"}}\n\ndata: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"delta\":\"{\"}\n\n")
	f.Add("data: {\"type\":\"error\",\"code\":\"server_error\"}\n\n")
	f.Add("data: {\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"output\":[{\"type\":\"reasoning\",\"id\":\"rs\"},{\"type\":\"function_call\",\"call_id\":\"c\"}]}}\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(body))}
		var err error
		var a react.Assembler
		readStream(context.Background(), resp, func(c react.Chunk, e error) bool {
			if e != nil {
				err = e
				return false
			}
			if c.Call != nil && (c.Call.Index < 0 || c.Call.Index >= react.MaxStreamCalls*2) {
				t.Fatalf("call index %d out of range", c.Call.Index)
			}
			if aerr := a.Add(c); aerr != nil {
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
		if !strings.Contains(body, "response.completed") && !strings.Contains(body, "response.incomplete") {
			t.Fatalf("a stream without a terminal event yielded no error: %q", body)
		}
	})
}

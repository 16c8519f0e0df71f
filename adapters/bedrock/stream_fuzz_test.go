package bedrock_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

// FuzzStream feeds arbitrary bytes as a ConverseStream answer through the
// SDK's event-stream decoder and the adapter: it must never panic, every
// error must be a *modelerr.Error, and a stream that yields no error must
// have carried messageStop.
func FuzzStream(f *testing.F) {
	f.Add([]byte(encode(f, start, textDelta, toolStart, toolDelta, frame{event: "messageStop", payload: `{"stopReason":"tool_use"}`})))
	f.Add([]byte(encode(f, start, textDelta)))
	f.Add([]byte(encode(f, start, frame{exception: "throttlingException", payload: `{"message":"x"}`})))
	f.Add([]byte(encode(f, frame{event: "contentBlockDelta", payload: `{"contentBlockIndex":-1,"delta":{"reasoningContent":{"signature":"s"}}}`},
		frame{event: "messageStop", payload: `{"stopReason":"max_tokens"}`})))
	var body atomic.Pointer[[]byte]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		_, _ = w.Write(*body.Load())
	}))
	defer srv.Close()
	f.Fuzz(func(t *testing.T, b []byte) {
		body.Store(&b)
		m := newModelURL(t, srv.URL)
		var a react.Assembler
		var err error
		for c, e := range m.GenerateStream(context.Background(), hello) {
			if e != nil {
				err = e
				break
			}
			if aerr := a.Add(c); aerr != nil {
				if !errors.Is(aerr, react.ErrMalformedStream) {
					t.Fatalf("the assembler: %v", aerr)
				}
				return
			}
		}
		if err != nil {
			if _, ok := err.(*modelerr.Error); !ok { //nolint:errorlint // the adapter's own type
				t.Fatalf("error %T %v is not a *modelerr.Error", err, err)
			}
			return
		}
		if !bytes.Contains(b, []byte("messageStop")) {
			t.Fatalf("a stream without messageStop yielded no error: %q", b)
		}
	})
}

package gemini_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

// FuzzStream feeds arbitrary event streams to the adapter through the
// SDK's stream reader: it must never panic, every error must be a
// *modelerr.Error, and a stream that yields no error must have carried a
// finish reason.
func FuzzStream(f *testing.F) {
	f.Add(chunkA + chunkB)
	f.Add(chunkA)
	f.Add(`data: {"error":{"code":503,"status":"UNAVAILABLE"}}` + "\n\n")
	f.Add(`data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"a"}},{"text":"x","thought":true}]},"finishReason":"MAX_TOKENS"}]}` + "\n\n")
	f.Add(`data: {"promptFeedback":{"blockReason":"SAFETY"}}` + "\n\n")
	var body atomic.Pointer[string]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(*body.Load()))
	}))
	defer srv.Close()
	f.Fuzz(func(t *testing.T, b string) {
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
		resp := a.Response()
		if resp.FinishReason == "" {
			t.Fatalf("a stream without a finish reason yielded no error: %q", b)
		}
		if !strings.Contains(b, "finishReason") && !strings.Contains(b, "blockReason") {
			t.Fatalf("a finish reason out of nowhere: %q", b)
		}
	})
}

package gemini_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reactguard/reactguard/internal/chattest"
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
		resp, ok := chattest.CheckStream(t, m.GenerateStream(context.Background(), hello), 0)
		if !ok {
			return
		}
		if resp.FinishReason == "" {
			t.Fatalf("a stream without a finish reason yielded no error: %q", b)
		}
		if !strings.Contains(b, "finishReason") && !strings.Contains(b, "blockReason") {
			t.Fatalf("a finish reason out of nowhere: %q", b)
		}
	})
}

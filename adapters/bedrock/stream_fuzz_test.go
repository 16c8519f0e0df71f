package bedrock_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/reactguard/reactguard/internal/chattest"
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
		if _, ok := chattest.CheckStream(t, m.GenerateStream(context.Background(), hello), 0); ok && !bytes.Contains(b, []byte("messageStop")) {
			t.Fatalf("a stream without messageStop yielded no error: %q", b)
		}
	})
}

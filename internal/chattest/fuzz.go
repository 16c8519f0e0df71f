package chattest

import (
	"errors"
	"iter"
	"testing"

	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

// CheckStream consumes an adapter's stream as the loop does and fails t
// where it breaks what every adapter promises of one, whatever its bytes:
// a call delta's index is within [0, maxIndex) (no bound when maxIndex is
// 0), the chunks assemble or the assembler refuses them as
// react.ErrMalformedStream (a model error the loop reports), and every
// error is a *modelerr.Error. It returns the assembled response and true
// when the stream ended without an error; false when it ended with one or
// its chunks were malformed, and the caller has nothing more to check.
// The adapters' FuzzStream targets run it on every input, then check
// their own end marker.
func CheckStream(t testing.TB, stream iter.Seq2[react.Chunk, error], maxIndex int) (react.Response, bool) {
	t.Helper()
	var a react.Assembler
	for c, err := range stream {
		if err != nil {
			if _, ok := err.(*modelerr.Error); !ok { //nolint:errorlint // the adapter's own type, not a wrapped one
				t.Fatalf("error %T %v is not a *modelerr.Error", err, err)
			}
			return react.Response{}, false
		}
		if maxIndex > 0 && c.Call != nil && (c.Call.Index < 0 || c.Call.Index >= maxIndex) {
			t.Fatalf("call index %d out of range [0, %d)", c.Call.Index, maxIndex)
		}
		if err := a.Add(c); err != nil {
			// A call whose id or name changes, say.
			if !errors.Is(err, react.ErrMalformedStream) {
				t.Fatalf("the assembler: %v", err)
			}
			return react.Response{}, false
		}
	}
	return a.Response(), true
}

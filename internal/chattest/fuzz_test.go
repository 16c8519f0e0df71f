package chattest

import (
	"errors"
	"fmt"
	"iter"
	"testing"

	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
)

// recorder is a testing.TB whose Fatalf records instead of stopping.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	if r.failed == "" {
		r.failed = fmt.Sprintf(format, args...)
	}
}

func chunks(err error, cs ...react.Chunk) iter.Seq2[react.Chunk, error] {
	return func(yield func(react.Chunk, error) bool) {
		for _, c := range cs {
			if !yield(c, nil) {
				return
			}
		}
		if err != nil {
			yield(react.Chunk{}, err)
		}
	}
}

// TestCheckStream: what CheckStream lets through and what it fails, with
// the reason for each.
func TestCheckStream(t *testing.T) {
	call := func(i int, id string) react.Chunk {
		return react.Chunk{Call: &react.CallDelta{Index: i, ID: id, Name: "t"}}
	}
	for _, tc := range []struct {
		name   string
		stream iter.Seq2[react.Chunk, error]
		max    int
		ok     bool
		fails  bool
	}{
		{"text then the end: assembled", chunks(nil, react.Chunk{Text: "hi"}), 0, true, false},
		{"a modelerr ends the stream: nothing more to check", chunks(&modelerr.Error{Kind: modelerr.Truncated, Err: errors.New("cut")}), 0, false, false},
		{"any other error breaks the adapters' promise", chunks(errors.New("plain")), 0, false, true},
		{"an index past the bound", chunks(nil, call(4, "a")), 4, true, true},
		{"a negative index", chunks(nil, call(-1, "a")), 4, true, true},
		{"no bound: any index the assembler takes", chunks(nil, call(4, "a")), 0, true, false},
		{"a call whose id changes is malformed, not a failure", chunks(nil, call(0, "a"), call(0, "b")), 0, false, false},
	} {
		r := &recorder{TB: t}
		_, ok := CheckStream(r, tc.stream, tc.max)
		if (r.failed != "") != tc.fails {
			t.Errorf("%s: failed = %q; want failure %v", tc.name, r.failed, tc.fails)
		}
		if !tc.fails && ok != tc.ok {
			t.Errorf("%s: ok = %v; want %v", tc.name, ok, tc.ok)
		}
	}
}

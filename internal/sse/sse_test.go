package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func all(t *testing.T, r *Reader) ([]Event, error) {
	t.Helper()
	var out []Event
	for {
		e, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
}

func TestReader(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     []Event
		why      string
	}{
		{"LF", "event: a\ndata: 1\n\ndata: 2\n\n", []Event{{Type: "a", Data: "1"}, {Data: "2"}}, "the common form"},
		{"CRLF", "event: a\r\ndata: 1\r\n\r\n", []Event{{Type: "a", Data: "1"}}, "CRLF ends a line"},
		{"bare CR", "event: a\rdata: 1\r\rdata: 2\r\r", []Event{{Type: "a", Data: "1"}, {Data: "2"}}, "a bare CR ends a line too (an SDK read such a stream as empty)"},
		{"multi-line data", "data: a\ndata:b\ndata\n\n", []Event{{Data: "a\nb\n"}}, "data lines join with LF; one space after the colon is dropped"},
		{"comments and unknown fields", ": keep-alive\nretry: 10\nfoo: bar\ndata: x\n\n", []Event{{Data: "x"}}, "ignored"},
		{"no data", "event: ping\n\ndata: x\n\n", []Event{{Data: "x"}}, "an event without data is not dispatched, and its type does not leak"},
		{"open event at the end", "data: a\n\ndata: b\n", []Event{{Data: "a"}}, "an event without its blank line is dropped"},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\n", []Event{{Data: "a", ID: "7"}, {Data: "b", ID: "7"}}, "the last event id"},
		{"BOM", "\uFEFFdata: a\n\n", []Event{{Data: "a"}}, "a byte order mark starts the stream"},
		{"empty", "", nil, "nothing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				got, err := all(t, NewReader(r, 0))
				require.ErrorIs(t, err, io.EOF)
				assert.Equal(t, tt.want, got, tt.why)
			}
		})
	}
}

func TestReaderBounds(t *testing.T) {
	_, err := all(t, NewReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 64))
	require.ErrorIs(t, err, ErrLineTooLong)
	boom := errors.New("reset")
	_, err = all(t, NewReader(io.MultiReader(strings.NewReader("data: a\n"), iotest.ErrReader(boom)), 0))
	require.ErrorIs(t, err, boom)
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "event: x\r\ndata: 1\r\n\r\n", "data: a\rdata: b\r\r", ":c\n\n", "\uFEFFid: 1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		whole, errW := all(t, NewReader(strings.NewReader(in), 1<<10))
		bytewise, errB := all(t, NewReader(iotest.OneByteReader(strings.NewReader(in)), 1<<10))
		if errors.Is(errW, ErrLineTooLong) || errors.Is(errB, ErrLineTooLong) {
			return
		}
		require.ErrorIs(t, errW, io.EOF)
		require.ErrorIs(t, errB, io.EOF)
		assert.Equal(t, whole, bytewise, "the events do not depend on how the bytes arrive")
		for _, e := range whole {
			assert.NotContains(t, e.Type, "\n")
			assert.NotContains(t, e.Type, "\r")
		}
	})
}

// Package sse reads Server-Sent Events (text/event-stream) as the HTML
// standard's parsing rules define them, for the model adapters' streams.
//
// The adapters read the event stream themselves rather than through their
// SDKs' stream helpers, which were measured to hide the edges of a stream:
// a connection that ends cleanly before the API's end marker reads as a
// complete answer, and lines ended by a bare CR are not recognised. This
// reader recognises every line ending the standard allows (CRLF, LF, CR),
// dispatches an event only at its blank line (an event still open when the
// stream ends is dropped, as the standard says), and bounds the size of a
// line, so that a hostile stream cannot make it buffer without limit. It
// says nothing about the API's end marker: that is the adapter's to check.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Event is one dispatched event.
type Event struct {
	// Type is the event's type: the last "event:" field, "" when it had
	// none (the standard's default type "message").
	Type string
	// Data is the event's data fields joined by "\n".
	Data string
	// ID is the last event id seen so far ("id:" fields persist between
	// events).
	ID string
}

// DefaultMaxLine is the longest line a Reader made with a max of 0
// accepts: 4 MiB.
const DefaultMaxLine = 4 << 20

// ErrLineTooLong is returned by [Reader.Next] for a line longer than the
// reader's bound.
var ErrLineTooLong = errors.New("sse: line too long")

// Reader reads the events of one stream. It is used by one goroutine.
type Reader struct {
	sc      *bufio.Scanner
	max     int
	id      string
	started bool
}

// NewReader returns a Reader of r whose lines are at most maxLine bytes
// (0 means [DefaultMaxLine]).
func NewReader(r io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(maxLine, 64<<10)), maxLine)
	sc.Split(splitLines)
	return &Reader{sc: sc, max: maxLine}
}

// splitLines splits at CRLF, LF or CR. A CR at the end of the data waits
// for the next byte, which may be the LF of a CRLF.
func splitLines(data []byte, atEOF bool) (int, []byte, error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0:
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	case atEOF:
		return i + 1, data[:i], nil
	}
	return 0, nil, nil // a CR last: wait for the next byte
}

// Next returns the next event. At the end of the stream it returns
// io.EOF (an event without its closing blank line is dropped); a read
// error is returned as is, a line past the bound as [ErrLineTooLong].
func (r *Reader) Next() (Event, error) {
	var (
		typ     string
		data    strings.Builder
		hasData bool
	)
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if !r.started {
			r.started = true
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		if len(line) == 0 {
			if !hasData {
				typ = "" // an event without data is not dispatched
				continue
			}
			return Event{Type: typ, Data: data.String(), ID: r.id}, nil
		}
		if line[0] == ':' {
			continue // a comment (servers send them to keep the connection alive)
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			typ = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.id = string(value)
			}
		default: // retry and unknown fields are ignored
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Event{}, fmt.Errorf("%w (more than %d bytes)", ErrLineTooLong, r.max)
		}
		return Event{}, err
	}
	return Event{}, io.EOF
}

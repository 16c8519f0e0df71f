package chattest

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// ManualDeadline is a context whose deadline the test fires by hand with
// [ManualDeadline.Expire], so a deadline test never waits on the wall
// clock. It reports no deadline time; after Expire its Err is
// context.DeadlineExceeded. It is safe for concurrent use.
type ManualDeadline struct {
	context.Context
	done chan struct{}
	once sync.Once
}

// NewManualDeadline returns a ManualDeadline that has not expired.
func NewManualDeadline() *ManualDeadline {
	return &ManualDeadline{Context: context.Background(), done: make(chan struct{})}
}

// Deadline reports no deadline: the test decides when it passes.
func (c *ManualDeadline) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done is closed by Expire.
func (c *ManualDeadline) Done() <-chan struct{} { return c.done }

// Err is nil before Expire and context.DeadlineExceeded after.
func (c *ManualDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// Expire fires the deadline; later calls do nothing.
func (c *ManualDeadline) Expire() { c.once.Do(func() { close(c.done) }) }

// Stop says how the caller ends a request that the server holds (a
// [Reply] with Hang). The zero value is StopNever.
type Stop int

const (
	// StopNever means the server answers; the caller waits.
	StopNever Stop = iota
	// StopDeadline means a [ManualDeadline] expires once the request
	// arrived.
	StopDeadline
	// StopCancel means the caller cancels once the request arrived.
	StopCancel
)

// String returns the constant's name without the Stop prefix.
func (b Stop) String() string {
	switch b {
	case StopNever:
		return "never"
	case StopDeadline:
		return "deadline"
	case StopCancel:
		return "cancel"
	}
	return "Stop(" + strconv.Itoa(int(b)) + ")"
}

// Context returns the context to call s with. For StopDeadline and
// StopCancel a goroutine ends it as soon as s has received a request, so
// no test waits on the wall clock; the goroutine also ends when the test
// ends. StopNever, and any other value, give context.Background().
func (b Stop) Context(s *Server) context.Context {
	switch b {
	case StopDeadline:
		ctx := NewManualDeadline()
		go func() {
			select {
			case <-s.arrived:
				ctx.Expire()
			case <-s.closing:
			}
		}()
		return ctx
	case StopCancel:
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			defer cancel()
			select {
			case <-s.arrived:
			case <-s.closing:
			}
		}()
		return ctx
	case StopNever:
	}
	return context.Background()
}

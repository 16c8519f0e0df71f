package inbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

// MaxEventStream bounds how long one live-update stream stays open; the
// browser's EventSource then opens a new one by itself. It keeps a
// connection from outliving a deploy by hours.
const MaxEventStream = 10 * time.Minute

// Live wakes the live-update streams of an inbox as soon as a run of the
// loop it observes suspends, stops or ends. Build it with [NewLive], add
// it to the loop's observers and hand it to the inbox:
//
//	live := inbox.NewLive()
//	loop, err := react.New(react.Config{…, Observer: react.Observers(react.NewLogObserver(logger), live)})
//	h, err := inbox.New(inbox.Options{Loop: loop, Live: live, …})
//
// A stream that wakes rereads what its page shows and sends it only when
// it changed, so a wake-up tells nobody whose run it was. Streams also
// reread every Options.Poll, so runs stopped by another process (another
// replica's loop) appear too, only later. A Live is safe for concurrent
// use; one may serve several inboxes.
type Live struct {
	mu sync.Mutex
	ch chan struct{} // closed and replaced at every change
}

// NewLive returns a Live that nothing has woken yet.
func NewLive() *Live { return &Live{} }

// wait returns a channel closed at the next change.
func (c *Live) wait() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

// Notify wakes every stream waiting, as the end of a run does; a host
// calls it when it changed runs by other means (a cleanup, an import).
func (c *Live) Notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// Observe implements react.Observer: the end of a call of Run or Resume
// (the run suspended, was interrupted, finished or failed) wakes the
// streams.
func (c *Live) Observe(ctx context.Context, e react.Event) context.Context {
	if e.Kind == react.EventRunEnd {
		c.Notify()
	}
	return ctx
}

// Wants implements react.EventFilter: only the ends of runs.
func (*Live) Wants() react.EventSet { return react.Events(react.EventRunEnd) }

var (
	_ react.Observer    = (*Live)(nil)
	_ react.EventFilter = (*Live)(nil)
)

// listEvents streams the list's version (GET /api/events/pending): one
// "list" event with a ListJSON's version each time what the list page
// shows changed.
func (h *Handler) listEvents(w http.ResponseWriter, r *http.Request) {
	id, ok := h.identify(w, r, true)
	if !ok {
		return
	}
	f, _, p := h.filter(r)
	if p != nil {
		h.fail(w, r, true, *p)
		return
	}
	h.events(w, r, "list", func(ctx context.Context) (any, error) {
		page, err := h.loop.ListPending(ctx, f, react.WithOwner(id.Owner))
		if err != nil {
			return nil, err
		}
		return struct {
			Version string `json:"version"`
		}{listVersion(page)}, nil
	})
}

// runEvents streams one run (GET /api/events/runs/{id}): a "run" event
// with its DetailJSON each time it changed.
func (h *Handler) runEvents(w http.ResponseWriter, r *http.Request) {
	id, run, _, _, ok := h.loadRequested(w, r, true)
	if !ok {
		return
	}
	h.events(w, r, "run", func(ctx context.Context) (any, error) {
		p, hist, err := h.load(ctx, id, run)
		switch {
		case errors.Is(err, errNotYours):
			return DetailJSON{Run: run, History: []runstore.Decision{}}, nil
		case err != nil:
			return nil, err
		}
		out := DetailJSON{Run: run, Waiting: p != nil, History: hist}
		if out.History == nil {
			out.History = []runstore.Decision{}
		}
		if p != nil {
			j := h.runJSON(*p, id)
			j.Form = "" // a form token changes with time; the page keeps its own
			out.Pending = &j
		}
		return out, nil
	})
}

// events writes Server-Sent Events of kind: read's answer now, and again
// each time it differs from the last one sent, rereading it when the
// inbox's Live reports a change and every Options.Poll, until the
// client goes away or MaxEventStream passed. A failed read is logged and
// ends the stream (the browser reconnects).
func (h *Handler) events(w http.ResponseWriter, r *http.Request, kind string, read func(context.Context) (any, error)) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		h.fail(w, r, true, problem{status: http.StatusNotImplemented, code: "unsupported", title: "No live updates",
			text: "This server cannot stream; the page asks for changes instead."})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), MaxEventStream)
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	poll := h.poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var last string
	for {
		woken := h.live.wait() // before the read: a change during it wakes the next one
		v, err := read(ctx)
		if err != nil {
			if ctx.Err() == nil {
				h.log.Warn("inbox: a live-update stream stopped", "kind", kind, "err", err)
			}
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		sum := sha256.Sum256(b)
		if now := hex.EncodeToString(sum[:]); now != last {
			last = now
			if writeEvent(w, kind, b) != nil {
				return
			}
			flusher.Flush()
		}
		select {
		case <-ctx.Done():
			return
		case <-woken:
		case <-tick.C:
		}
	}
}

// writeEvent writes one SSE event; JSON holds no newline.
func writeEvent(w io.Writer, kind string, data []byte) error {
	_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, data)
	return err
}

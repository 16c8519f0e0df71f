package inbox_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/inbox"
	"github.com/reactguard/reactguard/internal/inboxtest"
	"github.com/reactguard/reactguard/react"
)

// sse is an open live-update stream read by a test.
type sse struct {
	t      *testing.T
	cancel context.CancelFunc
	events chan [2]string // kind, data
}

// follow opens the stream at path as who.
func follow(t *testing.T, w *inboxtest.World, who, path string) (*sse, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.URL(path), nil)
	require.NoError(t, err)
	if who != "" {
		req.Header.Set("X-Who", who)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		cancel()
		return nil, resp.StatusCode
	}
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	s := &sse{t: t, cancel: cancel, events: make(chan [2]string, 16)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = resp.Body.Close() }()
		sc := bufio.NewScanner(resp.Body)
		var kind string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				s.events <- [2]string{kind, strings.TrimPrefix(line, "data: ")}
			}
		}
		close(s.events)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return s, http.StatusOK
}

// next returns the next event's kind and data; the test fails when none
// comes in time (generous: the stream is woken at once or at the next
// poll).
func (s *sse) next() (string, string) {
	s.t.Helper()
	select {
	case e, ok := <-s.events:
		require.True(s.t, ok, "the stream ended")
		return e[0], e[1]
	case <-time.After(10 * time.Second):
		s.t.Fatal("no event")
		return "", ""
	}
}

func version(t *testing.T, data string) string {
	t.Helper()
	var v struct{ Version string }
	require.NoError(t, json.Unmarshal([]byte(data), &v))
	require.NotEmpty(t, v.Version)
	return v.Version
}

// An open list follows its owner's runs as they stop: woken at once by
// the loop it observes (the poll is an hour), never by another tenant's
// run (no event tells whose run changed).
func TestLiveList(t *testing.T) {
	w := inboxtest.New(t, &inboxtest.Options{Inbox: func(o *inbox.Options) { o.Poll = time.Hour }})
	s, _ := follow(t, w, "acme:alice", "/api/events/pending")
	kind, data := s.next()
	assert.Equal(t, "list", kind)
	v0 := version(t, data)

	w.Start(alice, "pay bob 7")
	_, data = s.next()
	v1 := version(t, data)
	assert.NotEqual(t, v0, v1, "alice's new request changes her list")

	w.Start(react.Owner{Tenant: "beta", User: "carol"}, "pay dave 9") // another tenant's: alice's list does not change
	w.Start(alice, "pay erin 3")
	_, data = s.next()
	v2 := version(t, data)
	assert.NotEqual(t, v1, v2)
	var l inbox.ListJSON
	r := as(t, w, "acme:alice").get("/api/pending")
	require.NoError(t, json.Unmarshal([]byte(r.body), &l))
	assert.Equal(t, l.Version, v2, "the event after carol's run is alice's second request: carol's sent nothing")
}

// Without the loop's Live (runs stopped by another process), the stream
// rereads every Poll on the server and still sends the change.
func TestLiveListByPolling(t *testing.T) {
	w := inboxtest.New(t, &inboxtest.Options{Inbox: func(o *inbox.Options) { o.Poll, o.Live = 20*time.Millisecond, nil }})
	s, _ := follow(t, w, "acme:alice", "/api/events/pending")
	_, data := s.next()
	v0 := version(t, data)
	w.Start(alice, "pay bob 7")
	_, data = s.next()
	assert.NotEqual(t, v0, version(t, data))
}

// An open run page learns that someone else decided its run: the stream
// sends the run again once it moved on, without form tokens.
func TestLiveRun(t *testing.T) {
	w := inboxtest.New(t, &inboxtest.Options{Inbox: func(o *inbox.Options) { o.Poll = time.Hour }})
	id := w.Start(alice, "pay bob 7")
	s, _ := follow(t, w, "acme:alice", "/api/events/runs/"+url.PathEscape(id))
	kind, data := s.next()
	assert.Equal(t, "run", kind)
	var before inbox.DetailJSON
	require.NoError(t, json.Unmarshal([]byte(data), &before))
	require.True(t, before.Waiting)
	assert.Empty(t, before.Pending.Form, "a stream carries no form token")

	team := as(t, w, "acme:") // the tenant's approvals team decides it
	page := team.open(id)
	r := team.post(runPath(id), form(t, page, "approve", ""))
	require.Equal(t, http.StatusSeeOther, r.status, r.body)

	_, data = s.next()
	var after inbox.DetailJSON
	require.NoError(t, json.Unmarshal([]byte(data), &after))
	assert.False(t, after.Waiting && after.Pending.Ticket == before.Pending.Ticket, "the stream says the run moved on")
	require.NotEmpty(t, after.History)
	assert.Equal(t, "team@acme", after.History[0].By)
}

// Streams answer only the signed-in owner's runs.
func TestLiveRefused(t *testing.T) {
	w := inboxtest.New(t, nil)
	id := w.Start(alice, "pay bob 7")
	_, status := follow(t, w, "", "/api/events/pending")
	assert.Equal(t, http.StatusUnauthorized, status)
	_, status = follow(t, w, "beta:carol", "/api/events/runs/"+url.PathEscape(id))
	assert.Equal(t, http.StatusNotFound, status, "another owner's run answers as if it did not exist")
	_, status = follow(t, w, "acme:alice", "/api/events/pending?kind=nonsense")
	assert.Equal(t, http.StatusBadRequest, status)
}

package anthropic_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/adapters/anthropic"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// reply is one canned HTTP response.
type reply struct {
	status int               // 200 when 0
	header map[string]string // extra response headers
	file   string            // testdata file with the body
	body   string            // the body when file is empty
	ctype  string            // content type; application/json when empty
	hang   bool              // block until the client gives up
}

// fakeServer replays canned responses in order and records every request
// body the client sent.
type fakeServer struct {
	*httptest.Server
	t       testing.TB
	arrived chan struct{} // one value per request, sent before replying

	mu      sync.Mutex
	replies []reply
	bodies  [][]byte
}

func newServer(t testing.TB, replies ...reply) *fakeServer {
	t.Helper()
	s := &fakeServer{t: t, replies: replies, arrived: make(chan struct{}, 64)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("server: read body: %v", err)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		s.t.Errorf("server: got %s %s; want POST /v1/messages", r.Method, r.URL.Path)
	}
	// This SDK version sends the key as a bearer token; older ones used
	// x-api-key. Either is fine for the API.
	if got, alt := r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"); got != "Bearer test-key" && alt != "test-key" {
		s.t.Errorf("server: Authorization = %q, X-Api-Key = %q; want the key %q", got, alt, "test-key")
	}
	if r.Header.Get("Anthropic-Version") == "" {
		s.t.Errorf("server: no anthropic-version header")
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	if len(s.replies) == 0 {
		s.mu.Unlock()
		s.t.Errorf("server: unexpected request %d: %s", len(s.bodies), body)
		http.Error(w, `{"type":"error","error":{"type":"api_error","message":"no canned reply left"}}`, http.StatusInternalServerError)
		return
	}
	rep := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()
	s.arrived <- struct{}{}

	if rep.hang {
		<-r.Context().Done()
		return
	}
	out := []byte(rep.body)
	if rep.file != "" {
		out, err = os.ReadFile(filepath.Join("testdata", rep.file))
		if err != nil {
			s.t.Errorf("server: %v", err)
		}
	}
	ctype := rep.ctype
	if ctype == "" {
		ctype = "application/json"
	}
	w.Header().Set("Content-Type", ctype)
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	status := rep.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// requests returns the decoded bodies of every request received so far.
func (s *fakeServer) requests() []map[string]any {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]map[string]any, len(s.bodies))
	for i, b := range s.bodies {
		if err := json.Unmarshal(b, &out[i]); err != nil {
			s.t.Fatalf("request %d is not JSON: %v\n%s", i, err, b)
		}
	}
	return out
}

// field re-encodes one top-level field of request i for JSONEq.
func (s *fakeServer) field(i int, name string) string {
	s.t.Helper()
	reqs := s.requests()
	require.Greater(s.t, len(reqs), i, "requests received")
	b, err := json.Marshal(reqs[i][name])
	require.NoError(s.t, err)
	return string(b)
}

// client returns an SDK client for baseURL with its own transport, closed
// when the test ends, and no SDK retries.
func client(t testing.TB, baseURL string) sdk.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return sdk.NewClient(
		option.WithBaseURL(baseURL),
		option.WithAPIKey("test-key"),
		option.WithHTTPClient(&http.Client{Transport: tr}),
	)
}

// newModel returns a Model talking to s.
func newModel(t testing.TB, s *fakeServer, opts *anthropic.Options) *anthropic.Model {
	t.Helper()
	return anthropic.New(client(t, s.URL+"/"), "claude-sonnet-4-5", opts)
}

// manualDeadline is a context whose deadline the test fires by hand, so a
// deadline test never waits on the wall clock.
type manualDeadline struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newManualDeadline() *manualDeadline {
	return &manualDeadline{Context: context.Background(), done: make(chan struct{})}
}

func (c *manualDeadline) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *manualDeadline) Done() <-chan struct{}       { return c.done }
func (c *manualDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
func (c *manualDeadline) expire() { c.once.Do(func() { close(c.done) }) }

// stopBy says how the caller ends a request that the server holds.
type stopBy int

const (
	stopNever    stopBy = iota // the server answers
	stopDeadline               // the deadline expires once the request arrived
	stopCancel                 // the caller cancels once the request arrived
)

// context returns the context to call s with. For stopDeadline and
// stopCancel a goroutine ends it as soon as s has received the request, so
// no test waits on the wall clock.
func (b stopBy) context(s *fakeServer) context.Context {
	switch b {
	case stopDeadline:
		ctx := newManualDeadline()
		go func() {
			<-s.arrived
			ctx.expire()
		}()
		return ctx
	case stopCancel:
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-s.arrived
			cancel()
		}()
		return ctx
	case stopNever:
	}
	return context.Background()
}

package chattest

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Reply is one canned HTTP response. The zero Reply is an empty 200
// application/json response.
type Reply struct {
	Status      int               // 200 when 0
	Header      map[string]string // extra response headers
	File        string            // file under the test's testdata directory holding the body
	Body        string            // the body when File is empty
	ContentType string            // application/json when empty
	Hang        bool              // hold the request until the client gives up or the server closes
	// HangAfterBody writes and flushes the body, then holds the request
	// open like Hang: a stream that never ends.
	HangAfterBody bool
}

// Endpoint is the API a [Server] stands in for. The zero Endpoint accepts
// any request and answers an exhausted queue with a bare 500.
type Endpoint struct {
	// Path, when not empty, is the one path requests must POST to, e.g.
	// "/v1/messages"; any other method or path fails the test.
	Path string
	// Check, when not nil, inspects each request (its headers: the key,
	// the API version); a non-nil error fails the test. It runs on the
	// server's goroutines and must not call t.FailNow.
	Check func(r *http.Request) error
	// Exhausted is the body of the 500 answering a request that arrives
	// when no canned reply is left (the test fails in any case): an error
	// body in the API's own format, so the client decodes it.
	Exhausted string
}

// Server is an [httptest.Server] replaying canned replies in order and
// recording the body of every request. It is safe for concurrent use by
// any number of clients; the replies are handed out in arrival order.
// NewServer closes it when the test ends.
type Server struct {
	*httptest.Server
	t       testing.TB
	ep      Endpoint
	arrived chan struct{} // one value per request, sent before replying
	closing chan struct{} // closed before the server closes, to release hanging replies

	mu      sync.Mutex
	replies []Reply
	bodies  [][]byte
}

// arrivedBuffer bounds the arrivals a Server remembers for [Server.Arrived];
// later ones are dropped rather than block a handler.
const arrivedBuffer = 64

// NewServer starts a Server for ep that answers with replies, one per
// request, and registers its Close with t.Cleanup. A request beyond the
// last reply fails the test. A File reply whose file cannot be read fails
// the test and sends an empty body.
func NewServer(t testing.TB, ep Endpoint, replies ...Reply) *Server {
	t.Helper()
	s := &Server{
		t: t, ep: ep, replies: replies,
		arrived: make(chan struct{}, arrivedBuffer),
		closing: make(chan struct{}),
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		close(s.closing)
		s.Close()
	})
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("server: read body: %v", err)
	}
	if s.ep.Path != "" && (r.Method != http.MethodPost || r.URL.Path != s.ep.Path) {
		s.t.Errorf("server: got %s %s; want POST %s", r.Method, r.URL.Path, s.ep.Path)
	}
	if s.ep.Check != nil {
		if err := s.ep.Check(r); err != nil {
			s.t.Errorf("server: %s %s: %v", r.Method, r.URL.Path, err)
		}
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	if len(s.replies) == 0 {
		n := len(s.bodies)
		s.mu.Unlock()
		s.t.Errorf("server: unexpected request %d: %s", n, body)
		http.Error(w, s.ep.Exhausted, http.StatusInternalServerError)
		return
	}
	rep := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()
	select {
	case s.arrived <- struct{}{}:
	default:
	}

	if rep.Hang {
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	}
	out := []byte(rep.Body)
	if rep.File != "" {
		if out, err = os.ReadFile(filepath.Join("testdata", rep.File)); err != nil {
			s.t.Errorf("server: %v", err)
		}
	}
	ctype := rep.ContentType
	if ctype == "" {
		ctype = "application/json"
	}
	w.Header().Set("Content-Type", ctype)
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(out)
	if rep.HangAfterBody {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
	}
}

// Arrived receives one value per request the server has taken a reply
// for, sent before it replies (up to 64 not yet received; later arrivals
// are not signalled).
func (s *Server) Arrived() <-chan struct{} { return s.arrived }

// Requests returns the decoded JSON bodies of every request received so
// far, in arrival order. A body that is not a JSON object fails the test
// (t.Fatalf: call it from the test's goroutine).
func (s *Server) Requests() []map[string]any {
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

// Field re-encodes the top-level field name of request i (from 0) as JSON,
// for assert.JSONEq; an absent field is "null". Fewer than i+1 requests
// fail the test.
func (s *Server) Field(i int, name string) string {
	s.t.Helper()
	reqs := s.Requests()
	require.Greater(s.t, len(reqs), i, "requests received")
	b, err := json.Marshal(reqs[i][name])
	require.NoError(s.t, err)
	return string(b)
}

// HTTPClient returns an *http.Client with a transport of its own, whose
// idle connections are closed when the test ends, so goleak sees no
// lingering connection goroutines. Give it to the SDK under test.
func HTTPClient(t testing.TB) *http.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// ClosedURL returns the base URL ("http://127.0.0.1:PORT") of a port that
// was just listened on and closed, so a connection to it is refused.
func ClosedURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	return url
}

// CannedServer starts an httptest server answering every request with
// status and body (application/json), for runnable examples, which have
// no testing.T; the caller closes it. Tests use [NewServer].
func CannedServer(status int, body string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
}

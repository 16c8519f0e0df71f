package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reactguard/reactguard/inbox"
)

// buffer is a bytes.Buffer safe for the server's and the test's
// goroutines.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// start runs the program on state until the test ends or stop is called,
// and returns its address.
func start(t *testing.T, state string, out *buffer) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-state", state}, out, out, func(u string) { addr <- u })
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("the program exited %d:\n%s", code, out.String())
		}
	}
	t.Cleanup(stop)
	select {
	case u := <-addr:
		return u, stop
	case code := <-done:
		t.Fatalf("the program exited %d before serving:\n%s", code, out.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("the program did not serve within 60 s:\n%s", out.String())
	}
	return "", nil
}

// person calls the inbox's JSON API signed in as who.
type person struct {
	t    *testing.T
	base string
	who  string
}

func (p person) do(method, path string, body any, out any) int {
	p.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.base+"approvals/api"+path, r)
	if err != nil {
		p.t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: "demo-user", Value: p.who})
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			p.t.Fatalf("%s %s: %v\n%s", method, path, err, b)
		}
	}
	return resp.StatusCode
}

func runPath(id string) string { return "/runs/" + url.PathEscape(id) }

// The demo end to end: alice sees her three tasks (not carol's), approves
// the payment (it runs once), answers the question, and after a restart
// on the same file what still waits is there, with the history.
func TestDemo(t *testing.T) {
	state := filepath.Join(t.TempDir(), "inbox.db")
	var out buffer
	base, stop := start(t, state, &out)
	alice := person{t, base, "alice"}

	var list inbox.ListJSON
	if code := alice.do(http.MethodGet, "/pending", nil, &list); code != http.StatusOK || len(list.Runs) != 3 {
		t.Fatalf("alice's list: %d, %d runs; want 3\n%+v", code, len(list.Runs), list)
	}
	byTool := map[string]inbox.RunJSON{}
	for _, r := range list.Runs {
		byTool[r.Tool+r.Kind] = r
	}
	pay, ask := byTool["pay_invoiceapproval"], byTool["follow_up"]
	if pay.Run == "" || ask.Run == "" || !strings.Contains(pay.Reason, "1250 EUR") {
		t.Fatalf("alice's list holds %+v", list.Runs)
	}
	var res inbox.ResultJSON
	if code := alice.do(http.MethodPost, runPath(pay.Run), inbox.DecisionJSON{Decision: "approve", Ticket: pay.Ticket, Form: pay.Form}, &res); code != http.StatusOK || res.Status != "finished" {
		t.Fatalf("approving the payment: %d %+v\n%s", code, res, out.String())
	}
	if code := alice.do(http.MethodPost, runPath(pay.Run), inbox.DecisionJSON{Decision: "approve", Ticket: pay.Ticket, Form: pay.Form}, nil); code != http.StatusConflict {
		t.Errorf("the same approval again: %d; want 409", code)
	}
	if code := alice.do(http.MethodPost, runPath(ask.Run), inbox.DecisionJSON{Decision: "answer", Ticket: ask.Ticket, Form: ask.Form, Text: "finance@acme.example"}, &res); code != http.StatusOK || res.Status != "suspended" || res.Pending == nil || res.Pending.Tool != "send_report" {
		t.Fatalf("answering: %d %+v", code, res)
	}
	if n := strings.Count(out.String(), "WRITE paid INV-2041"); n != 1 {
		t.Errorf("the payment ran %d times; want 1:\n%s", n, out.String())
	}
	var team inbox.ListJSON
	person{t, base, "team"}.do(http.MethodGet, "/pending", nil, &team)
	if len(team.Runs) != 3 { // carol's payment, the website, the report
		t.Errorf("the team sees %d runs; want 3", len(team.Runs))
	}
	stop()

	var out2 buffer
	base, _ = start(t, state, &out2)
	alice = person{t, base, "alice"}
	if strings.Contains(out2.String(), "task") {
		t.Errorf("the restart started the tasks again:\n%s", out2.String())
	}
	var d inbox.DetailJSON
	if code := alice.do(http.MethodGet, runPath(pay.Run), nil, &d); code != http.StatusOK || d.Waiting || len(d.History) != 1 || d.History[0].By != "alice@acme.example" {
		t.Errorf("the paid run after a restart: %d %+v", code, d)
	}
	if code := alice.do(http.MethodGet, runPath(ask.Run), nil, &d); code != http.StatusOK || !d.Waiting || d.Pending.Tool != "send_report" {
		t.Errorf("the report after a restart: %d %+v", code, d)
	}
	if code := (person{t, base, "bob"}).do(http.MethodGet, "/pending", nil, nil); code != http.StatusUnauthorized {
		t.Errorf("an unknown person: %d; want 401", code)
	}
}

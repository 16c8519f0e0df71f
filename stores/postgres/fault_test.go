package postgres_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/stores/postgres"
	"github.com/reactguard/reactguard/tool"
)

// proxy forwards TCP connections to the server until it is cut: then it
// closes every connection it carries and refuses new ones, as a network
// that drops does, until it is restored.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	p.wg.Go(p.serve)
	t.Cleanup(func() {
		_ = ln.Close()
		p.Cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Go(func() { io.Copy(s, c); s.Close() }) //nolint:errcheck
		p.wg.Go(func() { io.Copy(c, s); c.Close() }) //nolint:errcheck
	}
}

// Cut drops every connection and refuses new ones.
func (p *proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// Restore accepts connections again.
func (p *proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// throughProxy returns the test DSN with its address replaced by a proxy's.
func throughProxy(t *testing.T) (string, *proxy) {
	u, err := url.Parse(dsn(t))
	if err != nil {
		t.Skip("the fault tests need a URL DSN")
	}
	p := newProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	return u.String(), p
}

var faultNode = react.Node{Name: "fault", Tools: []string{"create_site"}, MaxRounds: 10}

// faultAgent creates the site (c3), asks for approval (c4), creates it
// once approved (c5) and finishes (c8); before it turns to c5 it calls
// beforeWrite.
func faultAgent(beforeWrite func()) react.ModelFunc {
	return func(_ context.Context, req react.Request) (react.Response, error) {
		answered := func(id string) bool { _, ok := reacttest.ToolMessage(req, id); return ok }
		switch {
		case !answered("c3"):
			return reacttest.Calls(reacttest.Call("c3", "create_site", `{"name":"x"}`)), nil
		case !answered("c4"):
			return reacttest.Calls(reacttest.Approval("c4", "create_site", "please")), nil
		case !answered("c5"):
			beforeWrite()
			return reacttest.Calls(reacttest.Call("c5", "create_site", `{"name":"x"}`)), nil
		}
		return reacttest.Calls(reacttest.Finish("c8", "done")), nil
	}
}

type nameInput struct {
	Name string `json:"name"`
}

// TestFault_ConnectionLostMidRun drops the connection at two points of an
// approved run: while the model thinks before the write, and inside the
// write (after it applied, before its result is recorded). Each time the
// resume returns a Go error with an intact snapshot; once the network is
// back, Continue finishes the run and the write has run exactly once.
func TestFault_ConnectionLostMidRun(t *testing.T) {
	for _, at := range []string{"before the write", "inside the write"} {
		t.Run(at, func(t *testing.T) {
			d, p := throughProxy(t)
			s, err := postgres.Open(bg, d, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Migrate(bg); err != nil {
				t.Fatal(err)
			}
			var executions atomic.Int32
			var armed atomic.Bool
			create := tool.New("create_site", "Create a site.", func(context.Context, nameInput) (map[string]string, error) {
				executions.Add(1)
				if armed.Load() && at == "inside the write" {
					armed.Store(false)
					p.Cut() // applied; the reply to the store is lost
				}
				return map[string]string{"site_id": "s-1"}, nil
			})
			create.Effect = tool.Write
			create.Verify = func(context.Context, string) (tool.WriteStatus, any, error) {
				if executions.Load() > 0 {
					return tool.WriteApplied, map[string]string{"site_id": "s-1"}, nil
				}
				return tool.WriteNotApplied, nil, nil
			}
			tools, err := tool.NewCatalog(create)
			if err != nil {
				t.Fatal(err)
			}
			model := faultAgent(func() {
				if armed.Load() && at == "before the write" {
					armed.Store(false)
					p.Cut()
				}
			})
			run := "fault-" + t.Name()
			loop, err := react.New(react.Config{Model: model, Tools: tools,
				Guards: &guard.Options{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger()},
				Claims: s.Claims(), Runs: s.Runs(), NewRunID: func(context.Context) string { return run }, Observer: react.DiscardObserver})
			if err != nil {
				t.Fatal(err)
			}
			res, err := loop.Run(bg, faultNode, "create x")
			if err != nil || res.Status != react.Suspended {
				t.Fatalf("Run = %s, %v; want suspended for approval", res.Status, err)
			}
			armed.Store(true)
			ticket := res.Suspension.Ticket
			res, err = loop.ResumeRun(bg, run, react.Approve(ticket))
			if err == nil {
				t.Fatalf("ResumeRun with the connection cut %s = %s, nil; want a Go error", at, res.Status)
			}
			if len(res.Snapshot) == 0 || (res.Status != react.Interrupted && res.Status != react.Suspended) {
				t.Fatalf("ResumeRun with the connection cut = %s with a %d-byte snapshot, %v; want an interrupted or unchanged run with its snapshot", res.Status, len(res.Snapshot), err)
			}
			t.Logf("cut %s: %s, %v", at, res.Status, err)
			p.Restore()
			decision := react.Continue()
			if res.Status == react.Suspended {
				decision = react.Approve(ticket)
			}
			res, err = loop.Resume(bg, res.Snapshot, decision)
			if err != nil || res.Status != react.Finished {
				t.Fatalf("Resume once the network is back = %s, %v; want finished", res.Status, err)
			}
			if n := executions.Load(); n != 1 {
				t.Fatalf("create_site ran %d times; want exactly 1", n)
			}
			if _, ok, err := s.Runs().Get(bg, run); err != nil || ok {
				t.Fatalf("run store after the run finished = %v, %v; want the run deleted", ok, err)
			}
		})
	}
}

// A resume claim whose statement the server applied while its reply was
// lost (the network cut while the statement waited for a row lock, the
// lock released after) is this Store's: its next Claim of the snapshot
// finds it under its own lease, unsettled, and takes it (true), rather
// than calling the snapshot resumed by someone else.
func TestFault_ClaimAppliedReplyLost(t *testing.T) {
	d, p := throughProxy(t)
	name := fmt.Sprintf("reactguard-claim-lost-%d", os.Getpid())
	s, err := postgres.Open(bg, withParam(d, "application_name", name), &postgres.Options{Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(bg); err != nil {
		t.Fatal(err)
	}
	run := fmt.Sprintf("claim-lost-%s-%d", t.Name(), time.Now().UnixNano())
	if ok, err := s.Claims().Claim(bg, run+"/warm", "s0"); err != nil || !ok { // the lease held
		t.Fatalf("Claim = %v, %v; want true", ok, err)
	}
	// Another session inserts the same claim, uncommitted: the Store's
	// claim waits for it.
	other, err := pgx.Connect(bg, dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close(bg) }()
	tx, err := other.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(bg) //nolint:errcheck
	if _, err := tx.Exec(bg, `INSERT INTO reactguard_claims (run, id, owner, token, at) VALUES ($1, 's1', 0, 0, now())`, []byte(run)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Claims().Claim(bg, run, "s1")
		done <- err
	}()
	for wait := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var waiting int
		if err := other.QueryRow(bg, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, name).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(wait) {
			t.Fatal("the Store's claim never waited for the other session's row")
		}
	}
	p.Cut()
	if err := <-done; err == nil {
		t.Fatal("Claim whose connection was cut = nil; want an error")
	}
	if err := tx.Rollback(bg); err != nil { // the waiting claim goes on, and commits
		t.Fatal(err)
	}
	for wait := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var n int
		if err := other.QueryRow(bg, `SELECT count(*) FROM reactguard_claims WHERE run = $1 AND owner <> 0`, []byte(run)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(wait) {
			t.Fatal("the server did not apply the claim whose reply was lost: the test's premise failed")
		}
	}
	p.Restore()
	ok, err := s.Claims().Claim(bg, run, "s1")
	if err != nil || !ok {
		t.Fatalf("Claim after the lost reply = %v, %v; want true: the claim is this Store's", ok, err)
	}
	if err := s.Claims().Settle(bg, run, "s1"); err != nil {
		t.Fatalf("Settle = %v; want nil (the claim is held)", err)
	}
}

// Package inboxtest is the world the approvals inbox is tested in, by its
// HTTP tests (package inbox) and its browser tests (module inbox/browser):
// a loop over in-memory stores whose scripted agent suspends for
// approvals and questions, tools that count their executions, and an
// inbox served under /inbox/ with a test sign-in. Only tests use it.
package inboxtest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/inbox"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

// The tasks the agent knows (the user's words of a run):
//
//	"pay NAME AMOUNT"  find_payee, then pay {"payee_id","amount","memo"}: an approval (host-driven)
//	"pay twice NAME 5 5000" pay with "amount" sent twice, 5 then 5000: an ambiguous approval
//	"pay A 5 and B 9"  two payments, each approved in turn
//	"close an account" a question; the answer is the account close_account closes, after an approval
//	"post hostile"     post_note with script payloads in its arguments, and a hostile reason
//	"ask hostile"      a question holding script payloads
const (
	Hostile = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">`
	JSURL   = `javascript:window.__pwned=3`
	// RLO is a right-to-left override: it reverses how the text after it
	// reads.
	RLO = "\u202e"
)

// Identity returns the identity of "tenant:user" (the test sign-in's
// value): the owner {tenant, user}, decided by user@tenant. "tenant:"
// is the tenant's approvals team, who decides as team@tenant.
func Identity(who string) (inbox.Identity, bool) {
	t, u, ok := strings.Cut(who, ":")
	if !ok || t == "" {
		return inbox.Identity{}, false
	}
	d := u
	if d == "" {
		d = "team"
	}
	return inbox.Identity{Owner: react.Owner{Tenant: t, User: u}, Decider: d + "@" + t, Name: d}, true
}

// World is a loop, its stores and tools, and an inbox over them.
type World struct {
	T     testing.TB
	Loop  *react.Loop
	Runs  *runstore.Memory
	Audit *runstore.MemoryAudit
	Inbox *inbox.Handler
	// Live observes the loop and wakes the inbox's live updates.
	Live   *inbox.Live
	Server *httptest.Server // the inbox under /inbox/, /signin?as=tenant:user, /signout
	// Model counts the agent's turns.
	Model *reacttest.Model

	mu     sync.Mutex
	paid   map[string]int // by payee, once per idempotency key
	keys   map[string]int // executions by idempotency key
	closed map[string]int
	notes  atomic.Int32
	seq    atomic.Int64
	// Gate, when set, blocks every pay execution until it is closed.
	Gate chan struct{}
}

// Options adjusts a World.
type Options struct {
	// Inbox adjusts the inbox's options after the world set Loop,
	// Authenticate and Logger.
	Inbox func(*inbox.Options)
	// Loop adjusts the loop's configuration.
	Loop func(*react.Config)
	// Wrap wraps the inbox's loop (to inject failures).
	Wrap func(inbox.Loop) inbox.Loop
}

// New returns a world with its server started; both are closed with t.
func New(t testing.TB, o *Options) *World {
	t.Helper()
	if o == nil {
		o = &Options{}
	}
	w := &World{T: t, Runs: runstore.NewMemory(), Audit: runstore.NewMemoryAudit(),
		paid: map[string]int{}, keys: map[string]int{}, closed: map[string]int{}}
	w.Model = reacttest.Func(agent)
	w.Live = inbox.NewLive()
	cfg := react.Config{
		Model: w.Model, Tools: w.tools(), Observer: w.Live, Logger: slog.New(slog.DiscardHandler),
		Guards: &guard.Options{Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()},
		Claims: runstore.NewMemoryClaims(), Runs: w.Runs, Audit: w.Audit,
		SnapshotKeys: [][]byte{[]byte("inboxtest snapshot key: 32 bytes or more")},
		NewRunID: func(context.Context) string {
			return "run-" + strconv.FormatInt(w.seq.Add(1), 10)
		},
	}
	if o.Loop != nil {
		o.Loop(&cfg)
	}
	l, err := react.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Loop = l
	var il inbox.Loop = l
	if o.Wrap != nil {
		il = o.Wrap(l)
	}
	opts := inbox.Options{
		Loop: il, Live: w.Live, Logger: slog.New(slog.DiscardHandler), SignInURL: "/signin",
		Authenticate: func(r *http.Request) (inbox.Identity, error) {
			who := r.Header.Get("X-Who")
			if c, err := r.Cookie("who"); err == nil && who == "" {
				who = c.Value
			}
			id, ok := Identity(who)
			if !ok {
				return inbox.Identity{}, inbox.ErrSignIn
			}
			return id, nil
		},
	}
	if o.Inbox != nil {
		o.Inbox(&opts)
	}
	h, err := inbox.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	w.Inbox = h
	mux := http.NewServeMux()
	mux.Handle("/inbox/", http.StripPrefix("/inbox", h))
	mux.HandleFunc("/signin", func(rw http.ResponseWriter, r *http.Request) {
		http.SetCookie(rw, &http.Cookie{Name: "who", Value: r.URL.Query().Get("as"), Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		http.Redirect(rw, r, "/inbox/", http.StatusSeeOther)
	})
	w.Server = httptest.NewServer(mux)
	t.Cleanup(w.Server.Close)
	return w
}

// URL returns the address of the inbox's path p ("/" is the list).
func (w *World) URL(p string) string { return w.Server.URL + "/inbox" + p }

var desk = react.Node{Name: "desk", Tools: []string{"find_payee", "pay", "close_account"}, HostApproval: true, MaxRounds: 12}
var notes = react.Node{Name: "notes", Tools: []string{"post_note"}, MaxRounds: 12}

// Start runs task for owner until it stops, and returns the run's id; it
// fails the test unless the run suspended.
func (w *World) Start(owner react.Owner, task string) string {
	w.T.Helper()
	node := desk
	if strings.HasSuffix(task, "hostile") {
		node = notes
	}
	res, err := w.Loop.Run(context.Background(), node, task, react.WithOwner(owner))
	if err != nil || res.Status != react.Suspended {
		w.T.Fatalf("Run(%q) = %v, %v; want suspended", task, res.Status, err)
	}
	return res.Run
}

// Payments returns how many payments to payee the backend applied, and
// whether any idempotency key was executed twice.
func (w *World) Payments(payee string) (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	twice := false
	for _, n := range w.keys {
		twice = twice || n > 1
	}
	return w.paid[payee], twice
}

// Closed returns how many times account was closed.
func (w *World) Closed(account string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed[account]
}

// Notes returns how many notes were posted.
func (w *World) Notes() int { return int(w.notes.Load()) }

type payeeIn struct {
	Name string `json:"name"`
}

type payIn struct {
	PayeeID string `json:"payee_id"`
	Amount  int    `json:"amount"`
	Memo    string `json:"memo,omitempty"`
}

type closeIn struct {
	Account string `json:"account"`
}

type noteIn struct {
	Title string `json:"title"`
	Link  string `json:"link"`
	Body  string `json:"body"`
}

func (w *World) tools() *tool.Catalog {
	find := tool.New("find_payee", "Find a payee by name.", func(_ context.Context, in payeeIn) (map[string]string, error) {
		return map[string]string{"payee_id": "p-" + in.Name, "name": in.Name}, nil
	})
	find.Effect = tool.Read
	pay := tool.New("pay", "Pay a payee.", func(ctx context.Context, in payIn) (map[string]any, error) {
		if g := w.Gate; g != nil {
			<-g
		}
		req, _ := tool.RequestFrom(ctx)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.keys[req.IdempotencyKey]++
		if w.keys[req.IdempotencyKey] == 1 {
			w.paid[strings.TrimPrefix(in.PayeeID, "p-")]++
		}
		return map[string]any{"paid": in.PayeeID, "amount": in.Amount}, nil
	})
	pay.Effect = tool.Write
	pay.Params = map[string]tool.Source{"payee_id": tool.Result("find_payee", "payee_id"), "amount": tool.User()}
	closeAcct := tool.New("close_account", "Close an account.", func(_ context.Context, in closeIn) (map[string]string, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.closed[in.Account]++
		return map[string]string{"closed": in.Account}, nil
	})
	closeAcct.Effect = tool.Write
	closeAcct.Params = map[string]tool.Source{"account": tool.User()}
	note := tool.New("post_note", "Post a note.", func(context.Context, noteIn) (map[string]string, error) {
		w.notes.Add(1)
		return map[string]string{"posted": "yes"}, nil
	})
	note.Effect = tool.Write
	return tool.MustCatalog(find, pay, closeAcct, note)
}

// agent is the scripted model: stateless, every turn computed from what
// it is sent, so any process can resume its runs.
func agent(req react.Request) react.Response {
	var task string
	for _, m := range req.Messages {
		if m.Role == react.RoleUser {
			task = m.Content
			break
		}
	}
	msg := func(id string) (react.Message, bool) { return reacttest.ToolMessage(req, id) }
	decided := func(id string) react.Response {
		m, _ := msg(id)
		if strings.HasPrefix(m.Content, "the user declined") {
			return reacttest.Calls(reacttest.FailNode("c9", "the user declined"))
		}
		return reacttest.Calls(reacttest.Finish("c9", "done"))
	}
	f := strings.Fields(task)
	switch {
	case len(f) == 5 && f[0] == "pay" && f[1] == "twice":
		if _, ok := msg("c1"); !ok {
			return reacttest.Calls(reacttest.Call("c1", "find_payee", fmt.Sprintf(`{"name":%q}`, f[2])))
		}
		if _, ok := msg("c2"); !ok {
			return reacttest.Calls(reacttest.Call("c2", "pay", fmt.Sprintf(`{"payee_id":"p-%s","amount":5,"amount":5000}`, f[2])))
		}
		return decided("c2")
	case len(f) == 6 && f[0] == "pay" && f[3] == "and": // pay A 5 and B 99999: two approvals in turn
		if _, ok := msg("c1"); !ok {
			return reacttest.Calls(reacttest.Call("c1", "find_payee", fmt.Sprintf(`{"name":%q}`, f[1])), reacttest.Call("c3", "find_payee", fmt.Sprintf(`{"name":%q}`, f[4])))
		}
		first, ok := msg("c2")
		if !ok {
			return reacttest.Calls(reacttest.Call("c2", "pay", fmt.Sprintf(`{"payee_id":"p-%s","amount":%s}`, f[1], f[2])))
		}
		if strings.HasPrefix(first.Content, "the user declined") {
			return reacttest.Calls(reacttest.FailNode("c9", "the user declined"))
		}
		if _, ok := msg("c4"); !ok {
			return reacttest.Calls(reacttest.Call("c4", "pay", fmt.Sprintf(`{"payee_id":"p-%s","amount":%s}`, f[4], f[5])))
		}
		return decided("c4")
	case len(f) == 3 && f[0] == "pay":
		if _, ok := msg("c1"); !ok {
			return reacttest.Calls(reacttest.Call("c1", "find_payee", fmt.Sprintf(`{"name":%q}`, f[1])))
		}
		if _, ok := msg("c2"); !ok {
			args, _ := json.Marshal(map[string]any{"payee_id": "p-" + f[1], "amount": json.Number(f[2]), "memo": "invoice of " + f[1]})
			return reacttest.Calls(reacttest.Call("c2", "pay", string(args)))
		}
		return decided("c2")
	case task == "close an account":
		answer, ok := msg("c1")
		if !ok {
			return reacttest.Calls(reacttest.FollowUp("c1", "Which account should I close?"))
		}
		if _, ok := msg("c2"); !ok {
			account := strings.TrimPrefix(answer.Content, "the user answered: ")
			args, _ := json.Marshal(map[string]string{"account": account})
			return reacttest.Calls(reacttest.Call("c2", "close_account", string(args)))
		}
		return decided("c2")
	case task == "post hostile":
		if _, ok := msg("c1"); !ok {
			args, _ := json.Marshal(map[string]string{"title": Hostile, "link": JSURL, "body": "pay " + RLO + "1000 EUR" + "\u200b"})
			return reacttest.Calls(reacttest.Call("c1", "post_note", string(args)))
		}
		if _, ok := msg("c2"); !ok {
			return reacttest.Calls(reacttest.Approval("c2", "post_note", "please approve "+Hostile+" "+JSURL))
		}
		if m, _ := msg("c2"); strings.HasPrefix(m.Content, "the user declined") {
			return reacttest.Calls(reacttest.FailNode("c9", "declined"))
		}
		if _, ok := msg("c3"); !ok {
			args, _ := json.Marshal(map[string]string{"title": Hostile, "link": JSURL, "body": "pay " + RLO + "1000 EUR" + "\u200b"})
			return reacttest.Calls(reacttest.Call("c3", "post_note", string(args)))
		}
		return reacttest.Calls(reacttest.Finish("c9", "posted"))
	case task == "ask hostile":
		if _, ok := msg("c1"); !ok {
			return reacttest.Calls(reacttest.FollowUp("c1", "Which one? "+Hostile+" "+JSURL))
		}
		return reacttest.Calls(reacttest.Finish("c9", "answered"))
	}
	return reacttest.Calls(reacttest.FailNode("c9", "unknown task "+task))
}

// Eventually polls cond every 10 ms until it holds or d passes.
func Eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}

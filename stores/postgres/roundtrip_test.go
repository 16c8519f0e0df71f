package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/stores/postgres"
	"github.com/reactguard/reactguard/tool"
)

// statements records the statements the pool sends, one round trip each
// (the lease keeper's renewals go over a connection of their own).
type statements struct {
	mu  sync.Mutex
	sql []string
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	s.sql = append(s.sql, strings.Join(strings.Fields(d.SQL), " "))
	s.mu.Unlock()
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (s *statements) n() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sql)
}

func (s *statements) since(i int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sql[i:]...)
}

// tracedStore opens a migrated store whose pool records its statements.
func tracedStore(t testing.TB) (*postgres.Store, *statements) {
	cfg, err := pgxpool.ParseConfig(dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	st := &statements{}
	cfg.ConnConfig.Tracer = st
	pool, err := pgxpool.NewWithConfig(bg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := postgres.New(bg, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Migrate(bg); err != nil {
		t.Fatal(err)
	}
	return s, st
}

// story is a loop over the store whose model asks, turn by turn, for the
// calls of turns, and notes how many statements the pool had sent when
// each turn began.
type story struct {
	loop  *react.Loop
	st    *statements
	mu    sync.Mutex
	marks []int
}

func newStory(t *testing.T, s *postgres.Store, st *statements, run string, turns ...react.ToolCall) *story {
	get := tool.New("get_site", "Get a site.", func(_ context.Context, in nameInput) (map[string]string, error) {
		return map[string]string{"id": in.Name}, nil
	})
	get.Effect = tool.Read
	create := tool.New("create_site", "Create a site.", func(_ context.Context, in nameInput) (map[string]string, error) {
		return map[string]string{"id": in.Name}, nil
	})
	create.Effect = tool.Write
	tools, err := tool.NewCatalog(get, create)
	if err != nil {
		t.Fatal(err)
	}
	sy := &story{st: st}
	model := react.ModelFunc(func(_ context.Context, req react.Request) (react.Response, error) {
		sy.mu.Lock()
		sy.marks = append(sy.marks, st.n())
		sy.mu.Unlock()
		for _, c := range turns {
			if _, ok := reacttest.ToolMessage(req, c.ID); !ok {
				return reacttest.Calls(c), nil
			}
		}
		return reacttest.Calls(reacttest.Finish("end", "done")), nil
	})
	sy.loop, err = react.New(react.Config{Model: model, Tools: tools,
		Guards: &guard.Options{Ledger: s.Evidence(), Approvals: s.Approvals(), WriteLedger: s.WriteLedger()},
		Claims: s.Claims(), Runs: s.Runs(), Audit: s.Audit(), NewRunID: func(context.Context) string { return run }, Observer: react.DiscardObserver})
	if err != nil {
		t.Fatal(err)
	}
	return sy
}

// turns returns the statements of each span between model turns since the
// marks were reset, the span before the first turn first and the span after
// the last turn last.
func (sy *story) spans(start, end int) []int {
	sy.mu.Lock()
	defer sy.mu.Unlock()
	out := make([]int, 0, len(sy.marks)+1)
	prev := start
	for _, m := range sy.marks {
		out = append(out, m-prev)
		prev = m
	}
	out = append(out, end-prev)
	sy.marks = nil
	return out
}

var storyNode = react.Node{Name: "story", Tools: []string{"get_site", "create_site"}, MaxRounds: 12}

// The round trips of the durable path, counted by a pgx tracer through the
// loop as a service runs it: a guarded read is one statement, the first
// read of a Run and of a Resume included (the run's evidence is read with
// the Run's user text and with the Resume's claim); an approved write is at
// most two; the whole story of issue 19 (two guarded reads, a gated write,
// the approval, ResumeRun and the approved write) at most ten.
func TestRoundTrips(t *testing.T) {
	s, st := tracedStore(t)
	read := func(id string) react.ToolCall { return reacttest.Call(id, "get_site", `{"name":"`+id+`"}`) }
	write := func(id string) react.ToolCall { return reacttest.Call(id, "create_site", `{"name":"x"}`) }
	approval := reacttest.Approval("a", "create_site", "please")

	t.Run("the story", func(t *testing.T) {
		run := "rt-story-" + t.Name()
		sy := newStory(t, s, st, run, read("r1"), read("r2"), write("w1"), approval, write("w2"))
		start := st.n()
		res, err := sy.loop.Run(bg, storyNode, "create x")
		if err != nil || res.Status != react.Suspended {
			t.Fatalf("Run = %s, %v; want suspended", res.Status, err)
		}
		runSpans := sy.spans(start, st.n())
		mid := st.n()
		res, err = sy.loop.ResumeRun(bg, run, react.Approve(res.Suspension.Ticket))
		if err != nil || res.Status != react.Finished {
			t.Fatalf("ResumeRun = %s, %v; want finished", res.Status, err)
		}
		resumeSpans := sy.spans(mid, st.n())
		total := st.n() - start
		t.Logf("Run %v, ResumeRun %v: %d statements", runSpans, resumeSpans, total)
		for i, q := range st.since(start) {
			t.Logf("  %2d %.100s", i+1, q)
		}
		// Run: user text (with the load) | r1 | r2 | w1 gated | approval + save.
		// ResumeRun: get + claim with the decision (and the load) | w2 | finish (delete + settle).
		want := []struct {
			name  string
			got   int
			limit int
		}{
			{"first guarded read of a Run", runSpans[1], 1},
			{"guarded read", runSpans[2], 1},
			{"approved write", resumeSpans[1], 2},
			{"the whole story", total, 10},
		}
		for _, w := range want {
			if w.got > w.limit {
				t.Errorf("%s: %d statements; want at most %d", w.name, w.got, w.limit)
			}
		}
		// The resume granted the approval on the write's key: the write's
		// claim is one update of that key's row, nothing else.
		if q := st.since(mid); len(q) > resumeSpans[0] {
			claim := q[resumeSpans[0]]
			if !strings.HasPrefix(claim, "UPDATE reactguard_writes SET") || strings.Contains(claim, "WITH") {
				t.Errorf("the approved write's claim = %.120s; want one UPDATE of its key's row", claim)
			}
		}
	})

	t.Run("a write approved through Approvals", func(t *testing.T) {
		// A host that approves through the Store's Approvals (an inbox)
		// before the write is called again: the claim is one UPDATE.
		run := "rt-approved-" + t.Name()
		c := guard.GatedCall{CallID: "w1", Tool: "create_site", Args: []byte(`{"name":"x"}`), Fingerprint: "fp-x", Round: 1}
		if err := s.Approvals().Gate(bg, run, c); err != nil {
			t.Fatal(err)
		}
		if err := s.Approvals().Approve(bg, run, c.CallID, c.Fingerprint); err != nil {
			t.Fatal(err)
		}
		start := st.n()
		if _, ok, _, err := s.WriteLedger().BeginApprovedOrGate(bg, guard.IdempotencyKey(run, c.Fingerprint), c.Tool, run, c); err != nil || !ok {
			t.Fatalf("BeginApprovedOrGate = %v, %v; want the claim", ok, err)
		}
		if q := st.since(start); len(q) != 1 || !strings.HasPrefix(q[0], "UPDATE reactguard_writes SET") || strings.Contains(q[0], "WITH") {
			t.Errorf("the claim's statements = %q; want one UPDATE of its key's row", q)
		}
	})

	t.Run("first read of a Resume", func(t *testing.T) {
		run := "rt-resume-read-" + t.Name()
		sy := newStory(t, s, st, run, write("w1"), approval, read("r1"), write("w2"))
		first, err := sy.loop.Run(bg, storyNode, "create x")
		if err != nil || first.Status != react.Suspended {
			t.Fatalf("Run = %s, %v; want suspended", first.Status, err)
		}
		sy.spans(0, 0)
		mid := st.n()
		if res, err := sy.loop.ResumeRun(bg, run, react.Approve(first.Suspension.Ticket)); err != nil || res.Status != react.Finished {
			t.Fatalf("ResumeRun = %s, %v; want finished", res.Status, err)
		}
		spans := sy.spans(mid, st.n())
		if spans[1] != 1 {
			t.Errorf("the first guarded read of a Resume: %d statements; want 1 (spans %v)", spans[1], spans)
		}
		if spans[2] > 2 {
			t.Errorf("the approved write after it: %d statements; want at most 2 (spans %v)", spans[2], spans)
		}
		t.Logf("ResumeRun spans %v", spans)
	})
}

package task_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/task"
	"github.com/reactguard/reactguard/tool"
)

func TestMain(m *testing.M) {
	if helperProcess() {
		return
	}
	goleak.VerifyTestMain(m)
}

// routed is a scripted model whose turns are kept per step: a node's
// instructions start with "STEP <name>:", and each request is answered by
// the next turn of that step. It records every request.
type routed struct {
	mu    sync.Mutex
	turns map[string][]func(react.Request) react.Response
	reqs  map[string][]react.Request
}

func newRouted() *routed {
	return &routed{turns: map[string][]func(react.Request) react.Response{}, reqs: map[string][]react.Request{}}
}

// on adds turns for step; a turn is a react.Response or a
// func(react.Request) react.Response.
func (m *routed) on(step string, turns ...any) *routed {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range turns {
		switch t := t.(type) {
		case react.Response:
			m.turns[step] = append(m.turns[step], func(react.Request) react.Response { return t })
		case func(react.Request) react.Response:
			m.turns[step] = append(m.turns[step], t)
		default:
			panic(fmt.Sprintf("routed.on: %T", t))
		}
	}
	return m
}

func stepOf(req react.Request) string {
	sys := req.Messages[0].Content
	if !strings.HasPrefix(sys, "STEP ") {
		return ""
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(sys, "STEP "), ":")
	return name
}

func (m *routed) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	if err := ctx.Err(); err != nil {
		return react.Response{}, err
	}
	step := stepOf(req)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs[step] = append(m.reqs[step], react.Request{Messages: append([]react.Message(nil), req.Messages...)})
	q := m.turns[step]
	if len(q) == 0 {
		return react.Response{}, fmt.Errorf("routed: no turn left for step %q", step)
	}
	m.turns[step] = q[1:]
	return q[0](req), nil
}

// system returns the system message of the first request of step.
func (m *routed) system(step string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.reqs[step]) == 0 {
		return ""
	}
	return m.reqs[step][0].Messages[0].Content
}

func call(id, name, args string) react.ToolCall {
	return react.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

func turn(calls ...react.ToolCall) react.Response { return react.Response{ToolCalls: calls} }

func finish(id, summary string) react.Response {
	b, _ := json.Marshal(map[string]string{"summary": summary})
	return turn(call(id, react.ToolFinish, string(b)))
}

func set(id, key, value, ref string) react.Response {
	src := "tool_result"
	if ref == "" {
		src = "model"
	}
	b, _ := json.Marshal(map[string]any{"key": key, "value": json.RawMessage(value), "sourceType": src, "sourceRef": ref})
	return turn(call(id, react.ToolOutputSet, string(b)))
}

// world is the hotel world of the tests: its tools count their
// executions.
type world struct {
	hotels   []map[string]any // what search_hotels answers
	searched atomic.Int64
	booked   atomic.Int64
	bookedID atomic.Value
	quoteAt  time.Time // when quote's data was fetched
	catalog  *tool.Catalog
}

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func newWorld(t testing.TB) *world {
	w := &world{hotels: []map[string]any{{"hotel_id": "h-1", "name": "Alpen", "price": 180}}, quoteAt: now.Add(-time.Minute)}
	search := tool.New("search_hotels", "Search hotels in a city.", func(_ context.Context, in struct {
		City string `json:"city"`
	}) (map[string]any, error) {
		w.searched.Add(1)
		return map[string]any{"hotels": w.hotels}, nil
	})
	search.Effect = tool.Read
	search.Contract = &tool.Contract{Empty: tool.EmptyAllowed, IsEmpty: func(r any) bool {
		return len(r.(map[string]any)["hotels"].([]map[string]any)) == 0
	}}
	book := tool.New("book_hotel", "Book a hotel.", func(_ context.Context, in struct {
		HotelID string `json:"hotel_id"`
	}) (map[string]string, error) {
		w.booked.Add(1)
		w.bookedID.Store(in.HotelID)
		return map[string]string{"booking": "b-77", "hotel_id": in.HotelID}, nil
	})
	book.Effect = tool.Write
	book.Params = map[string]tool.Source{"hotel_id": tool.Step("search", "hotel_id")}
	book.Contract = &tool.Contract{Provenance: func(r any) evidence.Provenance {
		return evidence.Provenance{Voucher: r.(map[string]string)["booking"], Source: "bookings-api"}
	}}
	suggest := tool.New("suggest", "Suggest other cities.", func(context.Context, struct{}) (map[string]any, error) {
		return map[string]any{"cities": []string{"Thun"}}, nil
	})
	suggest.Effect = tool.Read
	quote := tool.New("quote", "The price of a night.", func(context.Context, struct{}) (map[string]any, error) {
		return map[string]any{"price": 212.5, "at": w.quoteAt.Format(time.RFC3339)}, nil
	})
	quote.Effect = tool.Read
	quote.Contract = &tool.Contract{MaxAge: 15 * time.Minute, Provenance: func(r any) evidence.Provenance {
		at, _ := time.Parse(time.RFC3339, r.(map[string]any)["at"].(string))
		return evidence.Provenance{FetchedAt: at, Source: "prices-api"}
	}}
	page := tool.New("visit_page", "Read a web page.", func(context.Context, struct{}) (map[string]string, error) {
		return map[string]string{"title": "Verify you are human"}, nil
	})
	page.Effect = tool.Read
	page.Contract = &tool.Contract{Blocked: func(r any) (tool.Wall, string) {
		if r.(map[string]string)["title"] == "Verify you are human" {
			return tool.WallCaptcha, "the page asks to prove you are human"
		}
		return tool.NoWall, ""
	}}
	var err error
	w.catalog, err = tool.NewCatalog(search, book, suggest, quote, page)
	require.NoError(t, err)
	return w
}

var testKey = []byte("0123456789abcdef0123456789abcdef")

// loopOf is a loop over the world with in-memory stores shared through
// guards (a process's stores).
func (w *world) loopOf(t testing.TB, m react.Model, guards *guard.Options) *react.Loop {
	t.Helper()
	if guards == nil {
		guards = &guard.Options{}
	}
	guards.Now = func() time.Time { return now }
	l, err := react.New(react.Config{Model: m, Tools: w.catalog, Guards: guards, SnapshotKeys: [][]byte{testKey}, Observer: react.DiscardObserver})
	require.NoError(t, err)
	return l
}

// trip is the three-step task of the tests: search, then book (when the
// search is satisfied) or suggest alternatives, then the answer.
func trip(acc task.Acceptance) task.Task {
	return task.Task{
		Name: "trip",
		Steps: []task.Step{
			{Name: "search", Node: react.Node{Instructions: "STEP search: find a hotel", Tools: []string{"search_hotels"},
				Outputs: []react.Output{{Key: "hotel_id", Required: true, Field: "hotels.hotel_id"}}},
				Next: []task.Edge{{To: "book", When: task.OnStatus(react.StepSatisfied)}, {To: "alternatives"}}},
			{Name: "book", Node: react.Node{Instructions: "STEP book: book the hotel", Tools: []string{"book_hotel"},
				Outputs: []react.Output{{Key: "booking", Required: true, Field: "booking"}}}},
			{Name: "alternatives", Node: react.Node{Instructions: "STEP alternatives: suggest other cities", Tools: []string{"suggest"},
				Outputs: []react.Output{{Key: "city", Required: true, Field: "cities"}}}},
		},
		Final:      &task.Step{Name: "answer", Node: react.Node{Instructions: "STEP answer: tell the user"}},
		Acceptance: acc,
	}
}

// searchTurns are the turns of a search step that finds h-1.
func searchTurns(m *routed) {
	m.on("search",
		turn(call("s1", "search_hotels", `{"city":"Bern"}`)),
		set("s2", "hotel_id", `"h-1"`, "s1"),
		finish("s3", "found h-1"))
}

// bookTurns are the turns of a book step that books the hotel the search
// verified, with the user's approval.
func bookTurns(m *routed) {
	m.on("book",
		turn(call("b1", "book_hotel", `{"hotel_id":"h-1"}`)),
		turn(call("b2", react.ToolApproval, `{"tool":"book_hotel","reason":"book h-1"}`)),
		turn(call("b3", "book_hotel", `{"hotel_id":"h-1"}`)),
		set("b4", "booking", `"b-77"`, "b3"),
		finish("b5", "booked b-77"))
}

package acceptance

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// languages are the catalogs a text scenario runs in.
var languages = []struct {
	name string
	lang prompt.Lang
}{{"en", prompt.English}, {"zh", prompt.Chinese}}

// event is one observer event, flattened for assertions.
type event struct {
	Kind    string // started, invoked, skipped, no_tool_calls, stall, stall_reset, suspended, finished, failed
	Round   int
	CallID  string
	Tool    string
	Outcome outcome.Outcome
	Code    errcode.Code
	Count   int    // stall: the counter after the stall
	Reason  string // stall: why
}

// recorder is a react.Observer keeping every event in order.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) add(e event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// Observe implements react.Observer.
func (r *recorder) Observe(ctx context.Context, e react.Event) context.Context {
	switch e.Kind {
	case react.EventRunStart:
		if !e.RunStart.Resumed {
			r.add(event{Kind: "started"})
		}
	case react.EventToolInvoked:
		r.add(event{Kind: "invoked", Round: e.Round, CallID: e.Tool.CallID, Tool: e.Tool.Tool, Outcome: e.Tool.Outcome, Code: e.Tool.Code})
	case react.EventToolSkipped:
		r.add(event{Kind: "skipped", Round: e.Round, CallID: e.Tool.CallID, Tool: e.Tool.Tool})
	case react.EventNoToolCalls:
		r.add(event{Kind: "no_tool_calls", Round: e.Round})
	case react.EventStall:
		r.add(event{Kind: "stall", Round: e.Round, CallID: e.Stall.CallID, Count: e.Stall.Count, Reason: e.Stall.Reason})
	case react.EventStallReset:
		r.add(event{Kind: "stall_reset", Round: e.Round, CallID: e.Stall.CallID})
	case react.EventSuspended:
		r.add(event{Kind: "suspended", Round: e.Round, CallID: e.Suspend.Suspension.CallID})
	case react.EventFinished:
		r.add(event{Kind: "finished", Round: e.Round})
	case react.EventFailed:
		r.add(event{Kind: "failed", Round: e.Round})
	default:
	}
	return ctx
}

// env is one agent under test: a scripted model, fake tools, the shared
// stores, and everything the loop reported.
type env struct {
	t      *testing.T
	lang   prompt.Lang
	cat    *prompt.Catalog
	model  *reacttest.Model
	tools  *tool.Catalog
	stores *guard.Options
	rec    *recorder
	logs   *bytes.Buffer
	logMu  *sync.Mutex
}

// newEnv returns an environment for model and tools in lang.
func newEnv(t *testing.T, lang prompt.Lang, model *reacttest.Model, tools ...*tool.Tool) *env {
	t.Helper()
	cat, err := tool.NewCatalog(tools...)
	require.NoError(t, err)
	return &env{
		t: t, lang: lang, cat: prompt.For(lang), model: model, tools: cat,
		stores: &guard.Options{Ledger: evidence.NewMemory(), Approvals: guard.NewMemoryApprovals(), WriteLedger: guard.NewMemoryWriteLedger()}, rec: &recorder{}, logs: &bytes.Buffer{}, logMu: &sync.Mutex{},
	}
}

// loop returns a new loop value over the environment's stores, as a new
// process would build one.
func (e *env) loop() *react.Loop {
	e.t.Helper()
	logger := slog.New(slog.NewJSONHandler(lockedWriter{e.logMu, e.logs}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	l, err := react.New(react.Config{
		Model:    e.model,
		Tools:    e.tools,
		Lang:     e.lang,
		Guards:   e.stores,
		Observer: react.Observers(e.rec, react.NewLogObserver(logger)),
		Logger:   logger,
		NewRunID: func(context.Context) string { return "run-1" },
	})
	require.NoError(e.t, err)
	return l
}

// run runs node with the user's words input.
func (e *env) run(node react.Node, input string) react.Result {
	e.t.Helper()
	res, err := e.loop().Run(context.Background(), node, input)
	require.NoError(e.t, err)
	return res
}

// resume resumes the suspended res with d in a new loop value.
func (e *env) resume(res react.Result, d react.Decision) react.Result {
	e.t.Helper()
	require.Equal(e.t, react.Suspended, res.Status, "resume needs a suspended run")
	out, err := e.loop().Resume(context.Background(), res.Snapshot, d)
	require.NoError(e.t, err)
	return out
}

// events returns the events recorded so far.
func (e *env) events() []event {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	return append([]event(nil), e.rec.events...)
}

// invoked returns the TOOL invoked event of callID.
func (e *env) invoked(callID string) event {
	e.t.Helper()
	for _, ev := range e.events() {
		if ev.Kind == "invoked" && ev.CallID == callID {
			return ev
		}
	}
	e.t.Fatalf("no TOOL invoked event for call %s; events: %+v", callID, e.events())
	return event{}
}

// kinds returns the events of the given kind.
func (e *env) kinds(kind string) []event {
	var out []event
	for _, ev := range e.events() {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// logRecords returns the slog records with message msg, decoded.
func (e *env) logRecords(msg string) []map[string]any {
	e.t.Helper()
	e.logMu.Lock()
	defer e.logMu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		require.NoError(e.t, json.Unmarshal([]byte(line), &rec), "log line %q", line)
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// toolLog returns the TOOL invoked log record of callID.
func (e *env) toolLog(callID string) map[string]any {
	e.t.Helper()
	for _, rec := range e.logRecords("TOOL invoked") {
		if rec["call_id"] == callID {
			return rec
		}
	}
	e.t.Fatalf("no TOOL invoked log record for call %s", callID)
	return nil
}

// message returns the tool message answering callID in res's transcript.
func message(t *testing.T, res react.Result, callID string) react.Message {
	t.Helper()
	for i := len(res.Transcript) - 1; i >= 0; i-- {
		if m := res.Transcript[i]; m.Role == react.RoleTool && m.ToolCallID == callID {
			return m
		}
	}
	t.Fatalf("no tool message for call %s in the transcript", callID)
	return react.Message{}
}

// requestText is everything a request shows the model: every message and
// every tool description.
func requestText(req react.Request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	for _, s := range req.Tools {
		b.WriteString(s.Description)
		b.WriteByte('\n')
		b.Write(s.InputSchema)
		b.WriteByte('\n')
	}
	return b.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// The site-building world of the specification's story.

var (
	websites = []map[string]any{{"id": "w-1", "name": "Company Blog"}}
	spaces   = []map[string]any{{"id": "sp-7", "name": "Sales"}, {"id": "sp-42", "name": "Marketing"}}
	site     = map[string]any{"site_id": "site-1001", "url": "https://spring-sale.example.com"}
)

// siteTools returns fresh list_websites and list_spaces reads and a
// create_site write (built by mkCreate) whose space_id must come from a
// list_spaces result.
func siteTools(create *reacttest.Fake) (listWebsites, listSpaces, createSite *reacttest.Fake) {
	listWebsites = reacttest.Succeed("list_websites", websites)
	listSpaces = reacttest.Succeed("list_spaces", spaces)
	create.Write()
	create.Tool.InputSchema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"name": {Type: "string"}, "space_id": {Type: "string"},
	}}
	create.Tool.Params = map[string]tool.Source{"space_id": tool.Result("list_spaces", "id")}
	return listWebsites, listSpaces, create
}

// siteNode is the node of the story: the three tools and the given outputs.
func siteNode(outputs ...react.Output) react.Node {
	return react.Node{
		Name:         "create_site",
		Instructions: "Create the website the user asks for.",
		Tools:        []string{"list_websites", "list_spaces", "create_site"},
		Outputs:      outputs,
	}
}

const (
	taskEN       = `Create a website called "Spring Sale" in the Marketing space.`
	createArgs   = `{"name":"Spring Sale","space_id":"sp-42"}`
	approvalWhy  = "the user asked for the site"
	siteQuestion = "Which space should the site go in?"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

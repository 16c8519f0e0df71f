// Command sse streams runs to a browser over Server-Sent Events, with
// net/http and nothing else. POST /runs starts a run of the sitebuilder
// story's agent and answers with the run's events as they happen, one SSE
// event each (its kind as the event type, a JSON view as the data); when
// the run suspends for approval, the page shows what the person must
// decide (with the suspension's ticket), and POST /runs/{id}/decision
// resumes the run from the run store with the decision and that ticket
// (ResumeRunStream), streamed the same way. A client that goes away
// cancels its run, which stays in the store, interrupted, and resumes with
// decision=continue.
//
//	go run ./examples/streaming/sse -addr localhost:8080   # then open http://localhost:8080/
//
// The agent is the story's scripted model made to stream
// (reacttest.Streaming); an adapter's model (adapters/openai,
// adapters/anthropic) streams the same way.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"iter"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/reactguard/reactguard/examples/sitebuilder/story"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/runstore"
)

func main() {
	addr := flag.String("addr", "localhost:8080", "address to listen on")
	flag.Parse()
	h, err := newHandler(&story.Backend{}, reacttest.Streaming(story.Scripted(), 8))
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "open http://%s/\n", *addr)
	log.Fatal(srv.ListenAndServe())
}

// handler serves the page, the runs and the decisions.
type handler struct {
	loop *react.Loop
	mux  *http.ServeMux
}

// newHandler returns the server's handler, with a loop on model whose
// stopped runs are kept in an in-memory run store.
func newHandler(backend *story.Backend, model react.Model) (http.Handler, error) {
	loop, err := react.New(react.Config{
		Model:    model,
		Tools:    backend.Tools(),
		Runs:     runstore.NewMemory(),
		Observer: react.DiscardObserver,
	})
	if err != nil {
		return nil, err
	}
	h := &handler{loop: loop, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /{$}", h.page)
	h.mux.HandleFunc("POST /runs", h.start)
	h.mux.HandleFunc("POST /runs/{id}/decision", h.decide)
	return h, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// start runs the story's node on the task of the form (the story's task
// when empty) and streams it.
func (h *handler) start(w http.ResponseWriter, r *http.Request) {
	task := r.FormValue("task")
	if task == "" {
		task = story.Task(prompt.English)
	}
	stream(w, r, h.loop.RunStream(r.Context(), story.Node(), task))
}

// decide resumes the run with the person's decision (approve, decline
// with a reason, answer with a text, each with the ticket of the
// suspension the page showed; continue) and streams it.
func (h *handler) decide(w http.ResponseWriter, r *http.Request) {
	var d react.Decision
	switch r.FormValue("decision") {
	case "approve":
		d = react.Approve(r.FormValue("ticket"))
	case "decline":
		d = react.Decline(r.FormValue("ticket"), r.FormValue("reason"))
	case "answer":
		d = react.Answer(r.FormValue("ticket"), r.FormValue("text"))
	case "continue":
		d = react.Continue()
	default:
		http.Error(w, "decision must be approve, decline, answer or continue", http.StatusBadRequest)
		return
	}
	stream(w, r, h.loop.ResumeRunStream(r.Context(), r.PathValue("id"), d))
}

// view is the JSON data of one SSE event: what a page shows of an event.
type view struct {
	Run     string `json:"run"`
	Round   int    `json:"round"`
	Text    string `json:"text,omitempty"`
	CallID  string `json:"call_id,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Args    string `json:"args,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Code    string `json:"code,omitempty"`
	// The three layers of a verdict.
	CallStatus     string `json:"call_status,omitempty"`
	ExecStatus     string `json:"exec_status,omitempty"`
	BusinessStatus string `json:"business_status,omitempty"`
	// What the person must decide.
	Decide   string `json:"decide,omitempty"` // approval, follow_up
	Question string `json:"question,omitempty"`
	Ticket   string `json:"ticket,omitempty"` // sent back with the decision
	// The end of the call.
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// viewOf returns the view of e, and false for the kinds the page does not
// show.
func viewOf(e react.Event, err error) (view, bool) {
	v := view{Run: e.Run, Round: e.Round}
	switch e.Kind {
	case react.EventTextDelta:
		v.Text = e.Text
	case react.EventToolStart:
		v.CallID, v.Tool, v.Args = e.ToolStart.CallID, e.ToolStart.Tool, string(e.ToolStart.Args)
	case react.EventToolInvoked:
		t := e.Tool
		v.CallID, v.Tool, v.Outcome = t.CallID, t.Tool, t.Outcome.String()
		if t.Code != 0 {
			v.Code = t.Code.String()
		}
		v.CallStatus, v.ExecStatus, v.BusinessStatus = t.Layers.Call.String(), t.Layers.Execution.String(), t.Layers.Business.String()
	case react.EventSuspended:
		s := e.Suspend.Suspension
		v.Decide, v.CallID, v.Question, v.Ticket = s.Kind.String(), s.CallID, s.Question, s.Ticket
		if a := s.Approval; a != nil {
			v.Tool, v.Args = a.Tool, string(a.Args)
		}
	case react.EventRoundEnd:
	case react.EventRunEnd:
		v.Status = e.RunEnd.Result.Status.String()
		if err != nil {
			v.Error = err.Error()
		}
	default:
		return v, false
	}
	return v, true
}

// stream writes the events of a run as Server-Sent Events, flushing each,
// until the run's call ends or the client goes away (the request's
// context, the run's, is then cancelled and the run stops, resumable).
func stream(w http.ResponseWriter, r *http.Request, events iter.Seq2[react.Event, error]) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	for e, err := range events {
		v, show := viewOf(e, err)
		if !show {
			continue
		}
		if werr := writeEvent(w, e.Kind.String(), v); werr != nil {
			return // the client is gone: breaking out cancels the run
		}
		flusher.Flush()
	}
}

// writeEvent writes one SSE event; JSON holds no newline, so the data is
// one line.
func writeEvent(w io.Writer, kind string, v view) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, b)
	return err
}

// page is a minimal page that reads the stream with fetch.
func (h *handler) page(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.WriteString(w, pageHTML)
}

const pageHTML = `<!doctype html>
<meta charset="utf-8"><title>reactguard: a streamed run</title>
<style>body{font:15px system-ui;margin:2em;max-width:50em} #log div{margin:.2em 0} .tool{color:#555} .ask{background:#ffd;padding:.5em}</style>
<button id="start">Create the Spring Sale site</button>
<div id="log"></div>
<script>
const log = document.getElementById('log');
let speech = null;
function line(cls, text) { const d = document.createElement('div'); d.className = cls; d.textContent = text; log.append(d); return d; }
async function follow(url, body) {
  const res = await fetch(url, {method: 'POST', body: new URLSearchParams(body)});
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const {value, done} = await reader.read();
    if (done) return;
    buf += value;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i); buf = buf.slice(i + 2);
      const kind = (block.match(/^event: (.*)$/m) || [])[1];
      const data = JSON.parse((block.match(/^data: (.*)$/m) || [])[1] || '{}');
      show(kind, data);
    }
  }
}
function show(kind, v) {
  if (kind === 'text_delta') { speech = speech || line('say', 'agent: '); speech.textContent += v.text; return; }
  speech = null;
  if (kind === 'tool_start') line('tool', '→ ' + v.tool + ' ' + v.args);
  if (kind === 'tool_invoked') line('tool', '⇒ ' + v.tool + ' ' + v.outcome + (v.code ? ' ' + v.code : ''));
  if (kind === 'suspended') {
    const d = line('ask', 'approve ' + v.tool + ' ' + v.args + '? ');
    for (const choice of ['approve', 'decline']) {
      const b = document.createElement('button'); b.textContent = choice;
      b.onclick = () => { d.remove(); follow('/runs/' + encodeURIComponent(v.run) + '/decision', {decision: choice, ticket: v.ticket}); };
      d.append(b);
    }
  }
  if (kind === 'run_end') line('end', v.status + (v.error ? ': ' + v.error : ''));
}
document.getElementById('start').onclick = () => follow('/runs', {});
</script>
`

package inbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/reactguard/reactguard/guard"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

// problem is an answer that is not the page asked for: what went wrong,
// in words a person can act on, and a stable code for the JSON API.
type problem struct {
	status   int
	code     string
	title    string
	text     string
	incident string
	signIn   bool
	decided  *runstore.Decision
	run      string // the run a link leads back to; "" for none
}

var (
	notFound = problem{status: http.StatusNotFound, code: "not_found", title: "Not found",
		text: "Nothing here waits for you: the address is wrong, the run ended long ago, or it is not yours to see."}
	errNotYours = errors.New("inbox: not found")
)

// filter reads the list's query: ?kind= and ?cursor=.
func (h *Handler) filter(r *http.Request) (runstore.Filter, string, *problem) {
	q := r.URL.Query()
	f := runstore.Filter{Limit: h.pageSize, Cursor: q.Get("cursor")}
	kind := q.Get("kind")
	switch kind {
	case "", "all":
		kind = ""
	case "approval":
		f.Kind = runstore.Approval
	case "follow_up":
		f.Kind = runstore.FollowUp
	case "interrupted":
		f.Kind = runstore.Interrupted
	default:
		return f, "", &problem{status: http.StatusBadRequest, code: "bad_request", title: "Unknown filter",
			text: "The list shows approval, follow_up, interrupted or all runs. Open the list again from its first page."}
	}
	return f, kind, nil
}

// listPage lists the page of the identity's runs that r asks for.
func (h *Handler) listPage(w http.ResponseWriter, r *http.Request, id Identity, api bool) (react.PendingPage, string, bool) {
	f, kind, p := h.filter(r)
	if p != nil {
		h.fail(w, r, api, *p)
		return react.PendingPage{}, "", false
	}
	page, err := h.loop.ListPending(r.Context(), f, react.WithOwner(id.Owner))
	switch {
	case errors.Is(err, runstore.ErrInvalidCursor):
		h.fail(w, r, api, problem{status: http.StatusBadRequest, code: "bad_request", title: "This page's link has expired",
			text: "The link to this page of the list is not valid (it belongs to another list or another person). Open the list again from its first page."})
		return page, "", false
	case err != nil:
		h.internal(w, r, api, "list pending runs", err)
		return page, "", false
	}
	for _, s := range page.Skipped {
		h.log.Warn("inbox: a listed run's sealed state did not open; it is not shown", "run", s.ID, "err", s.Err)
	}
	return page, kind, true
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	id, ok := h.identify(w, r, false)
	if !ok {
		return
	}
	page, kind, ok := h.listPage(w, r, id, false)
	if !ok {
		return
	}
	lv := &listView{Kind: kind, Skipped: len(page.Skipped), Version: listVersion(page)}
	for _, p := range page.Runs {
		lv.Rows = append(lv.Rows, rowOf(p, id.Decider))
	}
	q := url.Values{}
	if kind != "" {
		q.Set("kind", kind)
	}
	lv.API, lv.Events = "api/pending", "api/events/pending"
	if len(q) > 0 {
		lv.API += "?" + q.Encode()
		lv.Events += "?" + q.Encode()
	}
	if page.Next != "" {
		q.Set("cursor", page.Next)
		lv.Next = "?" + q.Encode()
	}
	if r.URL.Query().Get("cursor") != "" {
		lv.First = "./"
		if kind != "" {
			lv.First = "?kind=" + url.QueryEscape(kind)
		}
	}
	h.render(w, http.StatusOK, h.pageOf(id, "./", "list", lv, nil, nil))
}

func (h *Handler) apiList(w http.ResponseWriter, r *http.Request) {
	id, ok := h.identify(w, r, true)
	if !ok {
		return
	}
	page, _, ok := h.listPage(w, r, id, true)
	if !ok {
		return
	}
	out := ListJSON{Runs: make([]RunJSON, 0, len(page.Runs)), Skipped: len(page.Skipped), Next: page.Next, Version: listVersion(page)}
	for _, p := range page.Runs {
		out.Runs = append(out.Runs, h.runJSON(p, id))
	}
	writeJSON(w, http.StatusOK, out)
}

// runID returns the run id of a /runs/{id} request, or false when the
// address does not hold it as one escaped path segment (the form of every
// link the inbox writes).
func runID(r *http.Request) (string, bool) {
	id := r.PathValue("id")
	seg := path.Base(r.URL.EscapedPath())
	un, err := url.PathUnescape(seg)
	return id, err == nil && un == id && id != ""
}

// load reads run id for the identity: what it waits for (nil once it no
// longer waits) and its history. A run the identity may not see, or that
// neither waits nor has a history, is errNotYours.
func (h *Handler) load(ctx context.Context, id Identity, run string) (*react.Pending, []runstore.Decision, error) {
	me := react.WithOwner(id.Owner)
	var pending *react.Pending
	p, err := h.loop.Pending(ctx, run, me)
	switch {
	case err == nil:
		pending = &p
	case errors.Is(err, react.ErrNotOwner):
		return nil, nil, errNotYours
	case errors.Is(err, react.ErrRunNotFound):
	default:
		return nil, nil, err
	}
	hist, err := h.loop.History(ctx, run, me)
	switch {
	case errors.Is(err, react.ErrNotOwner):
		return nil, nil, errNotYours
	case err != nil:
		return nil, nil, err
	case pending == nil && len(hist) == 0:
		return nil, nil, errNotYours
	}
	return pending, hist, nil
}

// loadFailed answers a failed load.
func (h *Handler) loadFailed(w http.ResponseWriter, r *http.Request, api bool, run string, err error) {
	switch {
	case errors.Is(err, errNotYours):
		h.fail(w, r, api, notFound)
	case errors.Is(err, react.ErrSnapshot), errors.Is(err, react.ErrSnapshotRun):
		inc := h.incident("a run's sealed state did not open", err, "run", run)
		h.fail(w, r, api, problem{status: http.StatusInternalServerError, code: "unreadable", incident: inc, title: "This run cannot be shown",
			text: "Its sealed state failed verification (it was changed, is too old, or was sealed with a key this service no longer has), so nothing of it can be trusted or decided. Give your operator the incident id."})
	default:
		h.internal(w, r, api, "read a run", err)
	}
}

// loadRequested identifies the viewer and loads the run the request
// names; when it answers false it has written the failure (an HTML page,
// or JSON when api is true).
func (h *Handler) loadRequested(w http.ResponseWriter, r *http.Request, api bool) (id Identity, run string, p *react.Pending, hist []runstore.Decision, ok bool) {
	if id, ok = h.identify(w, r, api); !ok {
		return id, "", nil, nil, false
	}
	if run, ok = runID(r); !ok {
		h.fail(w, r, api, notFound)
		return id, "", nil, nil, false
	}
	p, hist, err := h.load(r.Context(), id, run)
	if err != nil {
		h.loadFailed(w, r, api, run, err)
		return id, run, nil, nil, false
	}
	return id, run, p, hist, true
}

func (h *Handler) detail(w http.ResponseWriter, r *http.Request) {
	id, run, p, hist, ok := h.loadRequested(w, r, false)
	if !ok {
		return
	}
	h.render(w, http.StatusOK, h.pageOf(id, "../", "run", nil, h.runViewOf(id, run, p, hist), nil))
}

func (h *Handler) runViewOf(id Identity, run string, p *react.Pending, hist []runstore.Decision) *runView {
	v := &runView{ID: run, History: decisionViews(hist, id.Decider), API: "../api/runs/" + url.PathEscape(run),
		Events: "../api/events/runs/" + url.PathEscape(run)}
	if p == nil {
		return v
	}
	v.Waiting, v.Node, v.Owner, v.Sealed, v.Round = true, p.Node, p.Owner.String(), p.Sealed, p.Round
	v.Status = "interrupted"
	s := p.Suspension
	if s == nil {
		return v
	}
	v.Status, v.Ticket = s.Kind.String(), s.Ticket
	v.Form = h.forms.issue(id, run, s.Ticket)
	if p.Decided != nil {
		d := decisionOf(*p.Decided, id.Decider)
		v.Decided = &d
	}
	if w := s.Approval; w != nil {
		v.Tool, v.CallID, v.Fprint = visible(w.Tool), w.CallID, w.Fingerprint
		v.Args, v.ArgList, v.Reason = jsonText(w.Args), argViews(p.Arguments), visible(s.Reason)
		v.Approve = approvable(*p)
		v.Odd = v.Tool.HasOdd() || v.Args.HasOdd() || v.Reason.HasOdd()
	} else {
		v.Question = visible(s.Question)
		v.Odd = v.Question.HasOdd()
	}
	return v
}

func (h *Handler) apiRun(w http.ResponseWriter, r *http.Request) {
	id, run, p, hist, ok := h.loadRequested(w, r, true)
	if !ok {
		return
	}
	out := DetailJSON{Run: run, Waiting: p != nil, History: hist}
	if out.History == nil {
		out.History = []runstore.Decision{}
	}
	if p != nil {
		j := h.runJSON(*p, id)
		out.Pending = &j
	}
	writeJSON(w, http.StatusOK, out)
}

// decision is a decision as a form or a JSON body sends it.
type decision struct {
	kind, ticket, form, text string
}

// decide applies d to run for the identity; on failure it returns what to
// tell the person, and the result is meaningless.
func (h *Handler) decide(r *http.Request, id Identity, run string, d decision) (react.Result, *problem) {
	bad := func(title, text string) (react.Result, *problem) {
		return react.Result{}, &problem{status: http.StatusBadRequest, code: "bad_request", title: title, text: text, run: run}
	}
	if d.kind != "approve" && d.kind != "decline" && d.kind != "answer" {
		return bad("Unknown decision", "A decision is approve, decline or answer. Reload the page and use its buttons.")
	}
	if d.ticket == "" {
		return bad("The form is incomplete", "The decision does not say which request it answers. Reload the page and decide again.")
	}
	if err := h.forms.check(d.form, id, run, d.ticket); err != nil {
		h.log.Warn("inbox: a decision's form token was refused", "run", run, "decider", id.Decider, "err", err)
		return react.Result{}, &problem{status: http.StatusForbidden, code: "form", title: "This form cannot be used", run: run,
			text: "The form has expired or was not made by this inbox for you. Nothing was changed. Reload the page and decide again."}
	}
	text := strings.TrimSpace(d.text)
	switch {
	case !utf8.ValidString(text):
		return bad("The text cannot be read", "The text is not valid UTF-8. Type it again.")
	case len(text) > h.maxText:
		return bad("The text is too long", fmt.Sprintf("It has %d bytes; at most %d. Shorten it and send it again.", len(text), h.maxText))
	case d.kind == "answer" && text == "":
		return bad("Write an answer first", "The agent asked a question; write your answer in the box and send it.")
	}
	me := react.WithOwner(id.Owner)
	ctx := r.Context()
	p, err := h.loop.Pending(ctx, run, me)
	switch {
	case errors.Is(err, react.ErrNotOwner):
		return react.Result{}, &notFound
	case err == nil:
		if d.kind == "approve" && p.Suspension != nil && p.Suspension.Ticket == d.ticket && !approvable(p) {
			return react.Result{}, &problem{status: http.StatusConflict, code: "ambiguous", title: "This call cannot be approved here", run: run,
				text: "It names an argument twice, and the tool would receive only the last value. Decline it and tell the agent to send the call again."}
		}
	case errors.Is(err, react.ErrRunNotFound): // ended: ResumeRun says whether this ticket was decided
	default:
		rerr := err
		if errors.Is(err, react.ErrSnapshot) || errors.Is(err, react.ErrSnapshotRun) {
			inc := h.incident("a run's sealed state did not open", err, "run", run)
			return react.Result{}, &problem{status: http.StatusInternalServerError, code: "unreadable", incident: inc, title: "This run cannot be decided", run: run,
				text: "Its sealed state failed verification. Nothing was changed. Give your operator the incident id."}
		}
		return react.Result{}, h.unavailable("read a run before deciding", rerr, run)
	}
	var dec react.Decision
	switch d.kind {
	case "approve":
		dec = react.Approve(d.ticket)
	case "decline":
		dec = react.Decline(d.ticket, text)
	default:
		dec = react.Answer(d.ticket, text)
	}
	// The person's request may be cut off (a closed tab, a dropped
	// connection); the decision they sent still applies and the run goes
	// on until it stops again.
	res, err := h.loop.ResumeRun(context.WithoutCancel(ctx), run, dec.DecidedBy(id.Decider), me)
	if err == nil {
		return res, nil
	}
	var decided *react.DecidedError
	switch {
	case errors.As(err, &decided):
		rec := decided.Decided
		who := "by " + rec.By
		if rec.By == id.Decider {
			who = "by you"
		}
		return react.Result{}, &problem{status: http.StatusConflict, code: "already_decided", title: "Already decided", run: run, decided: &rec,
			text: fmt.Sprintf("This request was %s %s. Nothing else was changed.", rec.Kind, who)}
	case errors.Is(err, react.ErrAlreadyResumed):
		return react.Result{}, &problem{status: http.StatusConflict, code: "being_applied", title: "A decision is being applied", run: run,
			text: "Someone's decision on this request is being applied right now; yours was not applied. Reload the page in a moment to see it."}
	case errors.Is(err, react.ErrTicket):
		return react.Result{}, &problem{status: http.StatusConflict, code: "stale", title: "This page was out of date", run: run,
			text: "The run no longer waits for what this page showed, so nothing was changed. Reload the page to see what it waits for now."}
	case errors.Is(err, react.ErrNotOwner), errors.Is(err, react.ErrRunNotFound):
		return react.Result{}, &notFound
	case errors.Is(err, react.ErrDecision):
		return bad("This decision does not fit", "The run waits for another kind of decision than this form sent. Reload the page and decide again.")
	case errors.Is(err, guard.ErrNotPending):
		inc := h.incident("the approvals store does not hold the call as gated", err, "run", run)
		return react.Result{}, &problem{status: http.StatusConflict, code: "not_pending", incident: inc, title: "This call cannot be approved", run: run,
			text: "The service's approvals store does not hold this call as waiting for approval, so nothing ran. Give your operator the incident id."}
	case errors.Is(err, react.ErrSnapshot) || errors.Is(err, react.ErrSnapshotRun):
		inc := h.incident("a run's sealed state did not open", err, "run", run)
		return react.Result{}, &problem{status: http.StatusInternalServerError, code: "unreadable", incident: inc, title: "This run cannot be decided", run: run,
			text: "Its sealed state failed verification. Nothing was changed. Give your operator the incident id."}
	}
	// A store or the model failed. If the run no longer waits on this
	// ticket, or the audit holds the decision, the decision applied and the
	// run stopped on the error afterwards (it is interrupted, or the same
	// decision applies it again): the run's page says where it is.
	if res.Status.IsValid() {
		now, perr := h.loop.Pending(context.WithoutCancel(ctx), run, me)
		applied := perr == nil && (now.Suspension == nil || now.Suspension.Ticket != d.ticket || now.Decided != nil)
		if applied || errors.Is(perr, react.ErrRunNotFound) {
			h.log.Error("inbox: the run stopped on an error after the decision applied", "run", run, "decider", id.Decider, "err", err)
			return res, nil
		}
	}
	return react.Result{}, h.unavailable("apply a decision", err, run)
}

// unavailable logs err under a new incident id and returns the 503 of a
// decision that did not apply.
func (h *Handler) unavailable(what string, err error, run string) *problem {
	inc := h.incident(what, err, "run", run)
	return &problem{status: http.StatusServiceUnavailable, code: "unavailable", incident: inc, title: "The decision could not be applied", run: run,
		text: "The service could not reach its stores; nothing was changed. Try again in a minute; if it keeps failing, give your operator the incident id."}
}

func (h *Handler) decideForm(w http.ResponseWriter, r *http.Request) {
	id, ok := h.identify(w, r, false)
	if !ok {
		return
	}
	run, ok := runID(r)
	if !ok {
		h.fail(w, r, false, notFound)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		h.tooLargeOrBad(w, r, false, err)
		return
	}
	f := r.PostForm
	_, p := h.decide(r, id, run, decision{kind: f.Get("decision"), ticket: f.Get("ticket"), form: f.Get("form"), text: f.Get("text")})
	if p != nil {
		h.fail(w, r, false, *p)
		return
	}
	// Back to the run's page (Post/Redirect/Get): a reload does not send
	// the form again. The address is relative to this one, the run's.
	w.Header().Set("Location", "./"+url.PathEscape(run))
	w.WriteHeader(http.StatusSeeOther)
}

func (h *Handler) apiDecide(w http.ResponseWriter, r *http.Request) {
	id, ok := h.identify(w, r, true)
	if !ok {
		return
	}
	run, ok := runID(r)
	if !ok {
		h.fail(w, r, true, notFound)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		h.fail(w, r, true, problem{status: http.StatusUnsupportedMediaType, code: "unsupported_media", title: "JSON only",
			text: "Send the decision as application/json."})
		return
	}
	var body DecisionJSON
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxForm))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		h.tooLargeOrBad(w, r, true, err)
		return
	}
	res, p := h.decide(r, id, run, decision{kind: body.Decision, ticket: body.Ticket, form: body.Form, text: body.Text})
	if p != nil {
		h.fail(w, r, true, *p)
		return
	}
	out := ResultJSON{Run: run, Status: res.Status.String()}
	if res.Status == react.Suspended || res.Status == react.Interrupted {
		if now, err := h.loop.Pending(context.WithoutCancel(r.Context()), run, react.WithOwner(id.Owner)); err == nil {
			j := h.runJSON(now, id)
			out.Pending = &j
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) tooLargeOrBad(w http.ResponseWriter, r *http.Request, api bool, err error) {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		h.fail(w, r, api, problem{status: http.StatusRequestEntityTooLarge, code: "too_large", title: "Too much text",
			text: fmt.Sprintf("A decision is at most %d bytes. Shorten the text and send it again.", maxForm)})
		return
	}
	h.fail(w, r, api, problem{status: http.StatusBadRequest, code: "bad_request", title: "The decision cannot be read",
		text: "The request was not a decision this inbox understands. Reload the page and decide again."})
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.identify(w, r, isAPI(r)); !ok {
		return
	}
	h.fail(w, r, isAPI(r), notFound)
}

func (h *Handler) crossOrigin(w http.ResponseWriter, r *http.Request) {
	h.log.Warn("inbox: a cross-origin request was refused", "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"))
	h.fail(w, r, isAPI(r), problem{status: http.StatusForbidden, code: "cross_origin", title: "Refused",
		text: "This request came from another site. Decisions are taken only from this inbox's own pages; nothing was changed."})
}

func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }

// incident logs err under a new incident id and returns the id.
func (h *Handler) incident(what string, err error, attrs ...any) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	inc := hex.EncodeToString(b[:])
	h.log.Error("inbox: "+what, append([]any{"incident", inc, "err", err}, attrs...)...)
	return inc
}

// internal answers 503 for a failure the person can only report: the
// error is logged, never shown.
func (h *Handler) internal(w http.ResponseWriter, r *http.Request, api bool, what string, err error) {
	inc := h.incident(what, err, "path", r.URL.Path)
	h.fail(w, r, api, problem{status: http.StatusServiceUnavailable, code: "unavailable", incident: inc, title: "The inbox cannot be shown right now",
		text: "The service could not reach its stores. Try again in a minute; if it keeps failing, give your operator the incident id."})
}

// fail answers p, as JSON or as a page.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, api bool, p problem) {
	if api {
		writeJSON(w, p.status, ErrorJSON{Error: p.code, Message: p.title + ": " + p.text, Incident: p.incident, Decided: p.decided})
		return
	}
	base := "./"
	if n := strings.Count(r.URL.EscapedPath(), "/") - 1; n > 0 {
		base = strings.Repeat("../", n)
	}
	pv := &problemView{Status: p.status, Code: p.code, Title: p.title, Text: p.text, Incident: p.incident, Home: base}
	if p.signIn {
		pv.SignIn = h.signIn
	}
	if p.decided != nil {
		d := decisionOf(*p.decided, "")
		pv.Decided = &d
	}
	if p.run != "" {
		pv.Run = "./" + url.PathEscape(p.run)
	}
	h.render(w, p.status, h.pageOf(Identity{}, base, "problem", nil, nil, pv))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // only values of this package's types, which marshal
		status, b = http.StatusInternalServerError, []byte(`{"error":"unavailable","message":"the answer could not be encoded"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

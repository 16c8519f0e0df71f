package inbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/inbox"
	"github.com/reactguard/reactguard/internal/inboxtest"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

var alice = react.Owner{Tenant: "acme", User: "alice"}

// client is a person's browser without JavaScript: it sends the sign-in
// header, follows no redirect, and reads pages as text.
type client struct {
	t   *testing.T
	w   *inboxtest.World
	who string
	hdr http.Header
}

func as(t *testing.T, w *inboxtest.World, who string) *client {
	return &client{t: t, w: w, who: who, hdr: http.Header{}}
}

type reply struct {
	status int
	header http.Header
	body   string
}

func (c *client) do(ctx context.Context, method, path, ctype string, body io.Reader) reply {
	c.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, c.w.URL(path), body)
	require.NoError(c.t, err)
	if c.who != "" {
		req.Header.Set("X-Who", c.who)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range c.hdr {
		req.Header[k] = v
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		return reply{status: -1, body: err.Error()}
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (c *client) get(path string) reply {
	c.t.Helper()
	return c.do(context.Background(), http.MethodGet, path, "", nil)
}

func (c *client) post(path string, form url.Values) reply {
	c.t.Helper()
	return c.do(context.Background(), http.MethodPost, path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
}

func (c *client) postJSON(path string, v any) reply {
	c.t.Helper()
	b, err := json.Marshal(v)
	require.NoError(c.t, err)
	return c.do(context.Background(), http.MethodPost, path, "application/json", strings.NewReader(string(b)))
}

var (
	ticketRE = regexp.MustCompile(`name="ticket" value="([^"]+)"`)
	formRE   = regexp.MustCompile(`name="form" value="([^"]+)"`)
)

// form returns the decision form of a run page: decision, ticket and token.
func form(t *testing.T, page reply, decision, text string) url.Values {
	t.Helper()
	tm, fm := ticketRE.FindStringSubmatch(page.body), formRE.FindStringSubmatch(page.body)
	require.NotNilf(t, tm, "the page has no decision form:\n%s", page.body)
	require.NotNil(t, fm)
	return url.Values{"decision": {decision}, "ticket": {tm[1]}, "form": {fm[1]}, "text": {text}}
}

func runPath(id string) string { return "/runs/" + url.PathEscape(id) }

// open returns the run's page, which must be 200.
func (c *client) open(id string) reply {
	c.t.Helper()
	r := c.get(runPath(id))
	require.Equalf(c.t, http.StatusOK, r.status, "GET %s = %d\n%s", runPath(id), r.status, r.body)
	return r
}

// TestApprove: the list shows the run, its page shows the sealed call
// with each argument's source, the approval runs the write once and the
// page then shows the history; the same form again (a replay, a reload
// that resends) changes nothing.
func TestApprove(t *testing.T) {
	w := inboxtest.New(t, nil)
	id := w.Start(alice, "pay alice 5")
	c := as(t, w, "acme:alice")

	list := c.get("/")
	require.Equal(t, http.StatusOK, list.status)
	assert.Contains(t, list.body, `href="runs/`+id+`"`, "the list links the run")
	assert.Contains(t, list.body, `amount=5, memo=&#34;invoice of alice&#34;, payee_id=&#34;p-alice&#34;`, "the list shows the call's arguments")

	page := c.open(id)
	for _, want := range []string{
		"Approve <code>pay</code>?",
		"<code>payee_id</code>", `&#34;p-alice&#34;`, `field &#34;payee_id&#34; of a find_payee result`, "Found in the result of call c1",
		"<code>amount</code>", "the user&#39;s own words", "Found in the user&#39;s request",
		"<code>memo</code>", "any value: the tool declares no source",
		`<button type="submit" class="primary" id="approve">Approve pay</button>`,
		"No decision on this run yet.",
	} {
		assert.Containsf(t, page.body, want, "the run's page lacks %q", want)
	}

	f := form(t, page, "approve", "")
	r := c.post(runPath(id), f)
	require.Equalf(t, http.StatusSeeOther, r.status, "approve = %d\n%s", r.status, r.body)
	assert.Equal(t, "./"+id, r.header.Get("Location"), "back to the run's page")
	paid, twice := w.Payments("alice")
	assert.Equal(t, 1, paid, "the approved write ran once")
	assert.False(t, twice)

	after := c.open(id)
	assert.Contains(t, after.body, "This run no longer waits for anything")
	assert.Contains(t, after.body, "<strong>approved</strong> by you (alice@acme)")
	assert.NotContains(t, after.body, `name="ticket"`, "nothing left to decide")
	assert.Contains(t, c.get("/").body, "Nothing waits for you")

	again := c.post(runPath(id), f)
	assert.Equalf(t, http.StatusConflict, again.status, "the same form again = %d\n%s", again.status, again.body)
	assert.Contains(t, again.body, "This request was approved by you.")
	paid, _ = w.Payments("alice")
	assert.Equal(t, 1, paid, "a replayed approval runs nothing")
}

// TestReplayAfterNextStop: the run paid alice and stopped for the payment
// to mallory. The first page's approval, sent again, approves nothing:
// the person never saw mallory's payment.
func TestReplayAfterNextStop(t *testing.T) {
	w := inboxtest.New(t, nil)
	id := w.Start(alice, "pay alice 5 and mallory 99999")
	c := as(t, w, "acme:alice")
	first := form(t, c.open(id), "approve", "")
	require.Equal(t, http.StatusSeeOther, c.post(runPath(id), first).status)

	page := c.open(id)
	require.Contains(t, page.body, `&#34;p-mallory&#34;`, "the run now waits for mallory's payment")
	for _, replay := range []struct {
		name string
		f    url.Values
	}{
		{"the approval of alice's payment", first},
		{"a decline with alice's ticket", url.Values{"decision": {"decline"}, "ticket": first["ticket"], "form": first["form"]}},
	} {
		r := c.post(runPath(id), replay.f)
		assert.Equalf(t, http.StatusConflict, r.status, "%s = %d; want 409\n%s", replay.name, r.status, r.body)
		assert.Contains(t, r.body, "already_decided"[:0]+"Already decided")
	}
	paid, _ := w.Payments("mallory")
	assert.Zero(t, paid, "nobody approved mallory's payment")
	assert.Contains(t, c.open(id).body, `&#34;p-mallory&#34;`, "it still waits")
}

// TestDecline: the reason reaches the history; the write never runs.
func TestDecline(t *testing.T) {
	w := inboxtest.New(t, nil)
	id := w.Start(alice, "pay alice 5")
	c := as(t, w, "acme:alice")
	r := c.post(runPath(id), form(t, c.open(id), "decline", "  not this month  "))
	require.Equalf(t, http.StatusSeeOther, r.status, "decline = %d\n%s", r.status, r.body)
	paid, _ := w.Payments("alice")
	assert.Zero(t, paid, "a declined write never runs")
	page := c.open(id)
	assert.Contains(t, page.body, "<strong>declined</strong> by you (alice@acme) · <code>pay</code>: <q>not this month</q>")
}

// TestAnswer: the answer to a question becomes the user's words, from
// which the next write's argument comes, and that write waits for its own
// approval.
func TestAnswer(t *testing.T) {
	w := inboxtest.New(t, nil)
	id := w.Start(alice, "close an account")
	c := as(t, w, "acme:alice")
	page := c.open(id)
	assert.Contains(t, page.body, "Which account should I close?")
	assert.Contains(t, page.body, `<textarea id="answer-text" name="text" rows="4" required></textarea>`)

	empty := c.post(runPath(id), form(t, page, "answer", "   "))
	assert.Equal(t, http.StatusBadRequest, empty.status, "an empty answer")
	assert.Contains(t, empty.body, "Write an answer first")

	r := c.post(runPath(id), form(t, page, "answer", "ACC-7"))
	require.Equalf(t, http.StatusSeeOther, r.status, "answer = %d\n%s", r.status, r.body)
	next := c.open(id)
	assert.Contains(t, next.body, "Approve <code>close_account</code>?")
	assert.Contains(t, next.body, "Found in the user&#39;s answer 1")
	assert.Contains(t, next.body, "<strong>answered</strong> by you (alice@acme): <q>ACC-7</q>")
	require.Equal(t, http.StatusSeeOther, c.post(runPath(id), form(t, next, "approve", "")).status)
	assert.Equal(t, 1, w.Closed("ACC-7"))
}

// TestDoubleSubmit: two requests of the same form at once (a double click
// without JavaScript, a retried request) while the write runs: one
// applies, the other is told so, and the write runs once.
func TestDoubleSubmit(t *testing.T) {
	w := inboxtest.New(t, nil)
	id := w.Start(alice, "pay alice 5")
	w.Gate = make(chan struct{})
	c := as(t, w, "acme:alice")
	f := form(t, c.open(id), "approve", "")
	var wg sync.WaitGroup
	replies := make([]reply, 2)
	wg.Add(1)
	go func() { defer wg.Done(); replies[0] = c.post(runPath(id), f) }()
	require.True(t, inboxtest.Eventually(5*time.Second, func() bool {
		p, err := w.Loop.Pending(context.Background(), id, react.WithOwner(alice))
		return err == nil && p.Decided != nil
	}), "the first request's decision is recorded while the write is held")
	replies[1] = c.post(runPath(id), f)
	close(w.Gate)
	wg.Wait()
	assert.Equal(t, http.StatusSeeOther, replies[0].status, "the first click applies")
	assert.Equalf(t, http.StatusConflict, replies[1].status, "the second click = %d\n%s", replies[1].status, replies[1].body)
	assert.Contains(t, replies[1].body, "This request was approved by you.")
	paid, twice := w.Payments("alice")
	assert.Equal(t, 1, paid)
	assert.False(t, twice)
}

// TestStaleTab: alice's tab shows the approval; carol's team colleague
// declines it meanwhile. Alice's approval is refused and says who
// decided; the write never runs.
func TestStaleTab(t *testing.T) {
	w := inboxtest.New(t, nil)
	id := w.Start(alice, "pay alice 5")
	a, team := as(t, w, "acme:alice"), as(t, w, "acme:")
	stale := form(t, a.open(id), "approve", "")
	require.Equal(t, http.StatusSeeOther, team.post(runPath(id), form(t, team.open(id), "decline", "duplicate invoice")).status)

	r := a.post(runPath(id), stale)
	assert.Equalf(t, http.StatusConflict, r.status, "the stale tab's approval = %d\n%s", r.status, r.body)
	assert.Contains(t, r.body, "This request was declined by team@acme.")
	assert.Contains(t, r.body, "<q>duplicate invoice</q>")
	paid, _ := w.Payments("alice")
	assert.Zero(t, paid)

	j := a.postJSON("/api"+runPath(id), inbox.DecisionJSON{Decision: "approve", Ticket: stale.Get("ticket"), Form: stale.Get("form")})
	assert.Equal(t, http.StatusConflict, j.status)
	var e inbox.ErrorJSON
	require.NoError(t, json.Unmarshal([]byte(j.body), &e))
	assert.Equal(t, "already_decided", e.Error)
	require.NotNil(t, e.Decided)
	assert.Equal(t, "team@acme", e.Decided.By)
	assert.Equal(t, runstore.Declined, e.Decided.Kind)
}

// TestAnotherOwner: bob (another tenant) and carol (another user of
// alice's tenant) never see alice's run: the list leaves it out, its
// pages answer exactly as a run that does not exist, alice's form is
// refused, and so is the cursor of alice's listing.
func TestAnotherOwner(t *testing.T) {
	w := inboxtest.New(t, &inboxtest.Options{Inbox: func(o *inbox.Options) { o.PageSize = 1 }})
	id := w.Start(alice, "pay alice 5")
	w.Start(alice, "pay alice 6")
	a := as(t, w, "acme:alice")
	f := form(t, a.open(id), "approve", "")
	var aliceList inbox.ListJSON
	require.NoError(t, json.Unmarshal([]byte(a.get("/api/pending").body), &aliceList))
	require.NotEmpty(t, aliceList.Next)

	for _, who := range []string{"beta:bob", "acme:carol", "beta:"} {
		t.Run(who, func(t *testing.T) {
			c := as(t, w, who)
			assert.NotContains(t, c.get("/").body, id)
			missing := c.get(runPath("run-404"))
			for _, path := range []string{runPath(id), "/api" + runPath(id)} {
				r := c.get(path)
				assert.Equalf(t, http.StatusNotFound, r.status, "GET %s", path)
				if !strings.HasPrefix(path, "/api") {
					assert.Equal(t, missing.body, r.body, "another owner's run reads as one that does not exist")
				}
			}
			r := c.post(runPath(id), f)
			assert.Equalf(t, http.StatusForbidden, r.status, "alice's form sent by %s = %d\n%s", who, r.status, r.body)
			r = c.get("/api/pending?cursor=" + url.QueryEscape(aliceList.Next))
			assert.Equalf(t, http.StatusBadRequest, r.status, "alice's cursor = %d\n%s", r.status, r.body)
			assert.NotContains(t, r.body, id)
		})
	}
	paid, _ := w.Payments("alice")
	assert.Zero(t, paid)
	assert.Contains(t, as(t, w, "acme:").get("/").body, id, "alice's tenant's team sees it")
}

// TestForgery: decisions without this inbox's token for this person, run
// and ticket, or sent by another site, are refused and change nothing.
func TestForgery(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	w := inboxtest.New(t, &inboxtest.Options{Inbox: func(o *inbox.Options) { o.Now = clock; o.FormMaxAge = time.Hour }})
	id := w.Start(alice, "pay alice 5")
	other := w.Start(alice, "pay alice 6")
	c := as(t, w, "acme:alice")
	good := form(t, c.open(id), "approve", "")
	otherForm := form(t, c.open(other), "approve", "")
	with := func(k, v string) url.Values {
		f := url.Values{}
		for key, vs := range good {
			f[key] = vs
		}
		f.Set(k, v)
		return f
	}
	for _, tc := range []struct {
		name   string
		f      url.Values
		hdr    map[string]string
		status int
	}{
		{"no token: a form another site built", with("form", ""), nil, http.StatusForbidden},
		{"a token of another run", with("form", otherForm.Get("form")), nil, http.StatusForbidden},
		{"a made-up token", with("form", "rgf1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), nil, http.StatusForbidden},
		{"another run's ticket with its token", with("ticket", otherForm.Get("ticket")), nil, http.StatusForbidden},
		{"no ticket", with("ticket", ""), nil, http.StatusBadRequest},
		{"sent by another site (Sec-Fetch-Site)", good, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"sent by another origin (Origin)", good, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"an unknown decision", with("decision", "approve_all"), nil, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := as(t, w, "acme:alice")
			for k, v := range tc.hdr {
				cc.hdr.Set(k, v)
			}
			r := cc.post(runPath(id), tc.f)
			assert.Equalf(t, tc.status, r.status, "%s = %d\n%s", tc.name, r.status, r.body)
		})
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	r := c.post(runPath(id), good)
	assert.Equal(t, http.StatusForbidden, r.status, "a form older than FormMaxAge")
	assert.Contains(t, r.body, "Reload the page and decide again")
	paid, _ := w.Payments("alice")
	assert.Zero(t, paid, "no forged decision applied")

	fresh := form(t, c.open(id), "approve", "")
	assert.Equal(t, http.StatusSeeOther, c.post(runPath(id), fresh).status, "a fresh form applies")

	j := c.do(context.Background(), http.MethodPost, "/api"+runPath(other), "text/plain", strings.NewReader(`{"decision":"approve"}`))
	assert.Equal(t, http.StatusUnsupportedMediaType, j.status, "a JSON decision must say so: a form of another site cannot")
}

// TestHeaders: every answer carries the headers a security review
// expects.
func TestHeaders(t *testing.T) {
	w := inboxtest.New(t, nil)
	id := w.Start(alice, "pay alice 5")
	c := as(t, w, "acme:alice")
	for _, path := range []string{"/", runPath(id), "/api/pending", "/api" + runPath(id), "/static/inbox.js", "/static/inbox.css", "/nowhere", runPath("none")} {
		r := c.get(path)
		h := r.header
		assert.Containsf(t, h.Get("Content-Security-Policy"), "frame-ancestors 'none'", "%s: CSP", path)
		assert.Containsf(t, h.Get("Content-Security-Policy"), "script-src 'self';", "%s: CSP", path)
		assert.NotContainsf(t, h.Get("Content-Security-Policy"), "unsafe-inline", "%s: CSP", path)
		assert.Equalf(t, "nosniff", h.Get("X-Content-Type-Options"), "%s", path)
		assert.Equalf(t, "DENY", h.Get("X-Frame-Options"), "%s", path)
		assert.Equalf(t, "no-referrer", h.Get("Referrer-Policy"), "%s", path)
		assert.NotEmptyf(t, h.Get("Content-Type"), "%s", path)
	}
	assert.Equal(t, "no-store", c.get(runPath(id)).header.Get("Cache-Control"), "a page with a form token is never cached")
	assert.Equal(t, http.StatusUnauthorized, as(t, w, "").get("/").status)
	assert.Contains(t, as(t, w, "").get("/").body, `<a href="/signin">Sign in</a>`)
	r := as(t, w, "").get("/api/pending")
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.JSONEq(t, `{"error":"sign_in","message":"Sign in first: This page shows the approvals of the person signed in, and nobody is."}`, r.body)
}

// TestHostileText: a model's arguments, reason and question are text on
// the page, never markup, never a link; characters that are invisible or
// reverse the text are shown as their codes.
func TestHostileText(t *testing.T) {
	w := inboxtest.New(t, nil)
	post := w.Start(alice, "post hostile")
	ask := w.Start(alice, "ask hostile")
	c := as(t, w, "acme:alice")
	pages := map[string]string{"list": c.get("/").body, "approval": c.open(post).body, "question": c.open(ask).body}
	for name, body := range pages {
		assert.NotContainsf(t, body, "<script>window", "%s: a script payload reached the page as markup", name)
		assert.NotContainsf(t, body, "<img", "%s", name)
		assert.NotRegexpf(t, `(?i)href="\s*javascript:`, body, "%s: a javascript: link", name)
		assert.NotContainsf(t, body, inboxtest.RLO, "%s: a raw right-to-left override", name)
		assert.NotContainsf(t, body, "\u200b", "%s: a raw zero-width space", name)
		assert.Containsf(t, body, "&lt;script&gt;window.__pwned=1&lt;/script&gt;", "%s: the payload is shown as text", name)
	}
	ap := pages["approval"]
	assert.Contains(t, ap, `<span class="odd" title="an invisible or direction-changing character, shown as its code">\u202e</span>1000 EUR`)
	assert.Contains(t, ap, "characters that are invisible or change the direction of text")
	assert.Contains(t, ap, "please approve &lt;script&gt;", "the reason, as text")
	assert.Equal(t, 1, strings.Count(pages["approval"], "<script"), "the page's only script is its own")

	var d inbox.DetailJSON
	require.NoError(t, json.Unmarshal([]byte(c.get("/api"+runPath(post)).body), &d))
	require.NotNil(t, d.Pending)
	var args map[string]string
	require.NoError(t, json.Unmarshal(d.Pending.Args, &args))
	assert.Equal(t, inboxtest.Hostile, args["title"], "the JSON API gives the value exactly, for the host's own escaping")
}

// TestAmbiguousArguments: a call that names an argument twice cannot be
// approved (the tool would receive the last value); it can be declined.
func TestAmbiguousArguments(t *testing.T) {
	w := inboxtest.New(t, nil)
	id := w.Start(alice, "pay twice bob 5 5000")
	c := as(t, w, "acme:alice")
	page := c.open(id)
	assert.NotContains(t, page.body, `id="approve"`)
	assert.Contains(t, page.body, "replaced by a later value: the tool never receives this one")
	assert.Contains(t, page.body, "It cannot be approved here")
	r := c.post(runPath(id), form(t, page, "approve", ""))
	assert.Equalf(t, http.StatusConflict, r.status, "approve = %d\n%s", r.status, r.body)
	var d inbox.DetailJSON
	require.NoError(t, json.Unmarshal([]byte(c.get("/api"+runPath(id)).body), &d))
	assert.False(t, d.Pending.Approvable)
	paid, _ := w.Payments("bob")
	assert.Zero(t, paid)
	assert.Equal(t, http.StatusSeeOther, c.post(runPath(id), form(t, page, "decline", "send it again")).status)
}

// TestJSONAPI: a host's own front end lists, reads and decides through
// the JSON API, with the ticket and token it was given.
func TestJSONAPI(t *testing.T) {
	w := inboxtest.New(t, nil)
	id := w.Start(alice, "pay alice 5 and mallory 99999")
	q := w.Start(alice, "close an account")
	c := as(t, w, "acme:alice")
	var l inbox.ListJSON
	require.NoError(t, json.Unmarshal([]byte(c.get("/api/pending").body), &l))
	require.Len(t, l.Runs, 2)
	assert.Zero(t, l.Skipped)
	r := l.Runs[0]
	assert.Equal(t, id, r.Run)
	assert.Equal(t, "approval", r.Kind)
	assert.Equal(t, "pay", r.Tool)
	assert.True(t, r.Approvable)
	require.Len(t, r.Arguments, 2)
	assert.Equal(t, inbox.ArgumentJSON{Name: "payee_id", Value: json.RawMessage(`"p-alice"`), Source: "result", Tool: "find_payee", Field: "payee_id", Calls: []string{"c1"}}, r.Arguments[0])
	zero := 0
	assert.Equal(t, inbox.ArgumentJSON{Name: "amount", Value: json.RawMessage(`5`), Source: "user", UserText: &zero}, r.Arguments[1])
	assert.Equal(t, "follow_up", l.Runs[1].Kind)
	assert.Equal(t, "Which account should I close?", l.Runs[1].Question)
	assert.Equal(t, q, l.Runs[1].Run)

	var filtered inbox.ListJSON
	require.NoError(t, json.Unmarshal([]byte(c.get("/api/pending?kind=follow_up").body), &filtered))
	require.Len(t, filtered.Runs, 1)
	assert.Equal(t, q, filtered.Runs[0].Run)
	assert.Equal(t, http.StatusBadRequest, c.get("/api/pending?kind=everything").status)

	res := c.postJSON("/api"+runPath(id), inbox.DecisionJSON{Decision: "approve", Ticket: r.Ticket, Form: r.Form})
	require.Equalf(t, http.StatusOK, res.status, "%s", res.body)
	var out inbox.ResultJSON
	require.NoError(t, json.Unmarshal([]byte(res.body), &out))
	assert.Equal(t, "suspended", out.Status)
	require.NotNil(t, out.Pending, "what it waits for now")
	assert.JSONEq(t, `{"payee_id":"p-mallory","amount":99999}`, string(out.Pending.Args))

	var l2 inbox.ListJSON
	require.NoError(t, json.Unmarshal([]byte(c.get("/api/pending").body), &l2))
	assert.NotEqual(t, l.Version, l2.Version, "the version changes with what the list shows")

	res = c.postJSON("/api"+runPath(id), inbox.DecisionJSON{Decision: "decline", Ticket: out.Pending.Ticket, Form: out.Pending.Form, Text: "too much"})
	require.Equalf(t, http.StatusOK, res.status, "%s", res.body)
	require.NoError(t, json.Unmarshal([]byte(res.body), &out))
	assert.Equal(t, "failed", out.Status)
	var d inbox.DetailJSON
	require.NoError(t, json.Unmarshal([]byte(c.get("/api"+runPath(id)).body), &d))
	assert.False(t, d.Waiting)
	require.Len(t, d.History, 2)
	assert.Equal(t, runstore.Approved, d.History[0].Kind)
	assert.Equal(t, "too much", d.History[1].Reason)
	assert.Equal(t, "alice@acme", d.History[1].By)

	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"unknown field", `{"decision":"approve","ticket":"x","form":"y","approve_all":true}`, http.StatusBadRequest},
		{"not JSON", `approve`, http.StatusBadRequest},
		{"too large", `{"decision":"answer","text":"` + strings.Repeat("a", 70<<10) + `"}`, http.StatusRequestEntityTooLarge},
	} {
		r := c.do(context.Background(), http.MethodPost, "/api"+runPath(q), "application/json", strings.NewReader(tc.body))
		assert.Equalf(t, tc.status, r.status, "%s: %s", tc.name, r.body)
	}
}

// TestTextBounds: a reason or an answer longer than MaxText, or not
// UTF-8, is refused with what to do.
func TestTextBounds(t *testing.T) {
	w := inboxtest.New(t, &inboxtest.Options{Inbox: func(o *inbox.Options) { o.MaxText = 16 }})
	id := w.Start(alice, "close an account")
	c := as(t, w, "acme:alice")
	page := c.open(id)
	r := c.post(runPath(id), form(t, page, "answer", strings.Repeat("x", 17)))
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, r.body, "It has 17 bytes; at most 16.")
	r = c.post(runPath(id), form(t, page, "answer", "\xff\xfe"))
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, r.body, "not valid UTF-8")
	r = c.post(runPath(id), form(t, page, "answer", strings.Repeat("y", 70<<10)))
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.status)
}

// TestDroppedConnection: the person's connection drops while the approved
// write runs; the decision still applies and the write runs once.
func TestDroppedConnection(t *testing.T) {
	w := inboxtest.New(t, nil)
	id := w.Start(alice, "pay alice 5")
	w.Gate = make(chan struct{})
	c := as(t, w, "acme:alice")
	f := form(t, c.open(id), "approve", "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan reply, 1)
	go func() {
		done <- c.do(ctx, http.MethodPost, runPath(id), "application/x-www-form-urlencoded", strings.NewReader(f.Encode()))
	}()
	require.True(t, inboxtest.Eventually(5*time.Second, func() bool {
		p, err := w.Loop.Pending(context.Background(), id, react.WithOwner(alice))
		return err == nil && p.Decided != nil
	}))
	cancel()
	assert.Equal(t, -1, (<-done).status, "the connection was dropped")
	close(w.Gate)
	assert.True(t, inboxtest.Eventually(5*time.Second, func() bool { n, _ := w.Payments("alice"); return n == 1 }), "the write ran")
	assert.True(t, inboxtest.Eventually(5*time.Second, func() bool {
		return strings.Contains(c.get(runPath(id)).body, "This run no longer waits for anything")
	}), "the run went on to its end")
	paid, twice := w.Payments("alice")
	assert.Equal(t, 1, paid)
	assert.False(t, twice)
}

// failing is a loop whose store calls fail with an error holding a
// secret.
type failing struct {
	inbox.Loop
	list, pending, resume bool
}

var errSecret = errors.New("dial postgres://inbox:s3cr3t-pass@db.internal:5432/prod: connection refused")

func (f *failing) ListPending(ctx context.Context, fl runstore.Filter, opts ...react.RunOption) (react.PendingPage, error) {
	if f.list {
		return react.PendingPage{}, errSecret
	}
	return f.Loop.ListPending(ctx, fl, opts...)
}

func (f *failing) Pending(ctx context.Context, id string, opts ...react.RunOption) (react.Pending, error) {
	if f.pending {
		return react.Pending{}, errSecret
	}
	return f.Loop.Pending(ctx, id, opts...)
}

func (f *failing) ResumeRun(ctx context.Context, id string, d react.Decision, opts ...react.RunOption) (react.Result, error) {
	if f.resume {
		return react.Result{}, errSecret
	}
	return f.Loop.ResumeRun(ctx, id, d, opts...)
}

// TestStoreErrors: a failing store gets a page that says what to do and
// an incident id, and never the error's text.
func TestStoreErrors(t *testing.T) {
	var f *failing
	var logs strings.Builder
	var mu sync.Mutex
	w := inboxtest.New(t, &inboxtest.Options{
		Wrap: func(l inbox.Loop) inbox.Loop { f = &failing{Loop: l}; return f },
		Inbox: func(o *inbox.Options) {
			o.Logger = slogTo(&mu, &logs)
		},
	})
	id := w.Start(alice, "pay alice 5")
	c := as(t, w, "acme:alice")
	page := c.open(id)
	for _, tc := range []struct {
		name   string
		set    func()
		req    func() reply
		status int
	}{
		{"list", func() { f.list = true }, func() reply { return c.get("/") }, http.StatusServiceUnavailable},
		{"list API", func() { f.list = true }, func() reply { return c.get("/api/pending") }, http.StatusServiceUnavailable},
		{"run page", func() { f.pending = true }, func() reply { return c.get(runPath(id)) }, http.StatusServiceUnavailable},
		{"decision", func() { f.resume = true }, func() reply { return c.post(runPath(id), form(t, page, "approve", "")) }, http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			*f = failing{Loop: f.Loop}
			tc.set()
			r := tc.req()
			assert.Equalf(t, tc.status, r.status, "%s", r.body)
			assert.NotContains(t, r.body, "s3cr3t")
			assert.NotContains(t, r.body, "db.internal")
			m := regexp.MustCompile(`[0-9a-f]{12}`).FindString(r.body)
			require.NotEmptyf(t, m, "no incident id in\n%s", r.body)
			mu.Lock()
			assert.Contains(t, logs.String(), m, "the log holds the incident")
			mu.Unlock()
		})
	}
	*f = failing{Loop: f.Loop}
	paid, _ := w.Payments("alice")
	assert.Zero(t, paid)
	assert.Equal(t, http.StatusSeeOther, c.post(runPath(id), form(t, page, "approve", "")).status, "the same form applies once the store is back")
}

// TestUnreadableRun: a run whose sealed state was edited is not shown as
// waiting: the list says a run could not be opened, its page says it
// cannot be shown.
func TestUnreadableRun(t *testing.T) {
	w := inboxtest.New(t, nil)
	id := w.Start(alice, "pay alice 5")
	rec, ok, err := w.Runs.Get(context.Background(), id)
	require.True(t, ok)
	require.NoError(t, err)
	rec.Snapshot = []byte(strings.Replace(string(rec.Snapshot), "p-alice", "p-mallo", 1))
	require.NoError(t, w.Runs.Save(context.Background(), rec))
	c := as(t, w, "acme:alice")
	list := c.get("/")
	assert.Contains(t, list.body, "1 run on this page could not be opened")
	assert.NotContains(t, list.body, "p-mallo")
	r := c.get(runPath(id))
	assert.Equal(t, http.StatusInternalServerError, r.status)
	assert.Contains(t, r.body, "This run cannot be shown")
	assert.NotContains(t, r.body, "p-mallo")
}

// TestPagesAndEmpty: the list pages through runs; an empty list says what
// will appear and how.
func TestPagesAndEmpty(t *testing.T) {
	w := inboxtest.New(t, &inboxtest.Options{Inbox: func(o *inbox.Options) { o.PageSize = 2 }})
	c := as(t, w, "acme:alice")
	empty := c.get("/")
	assert.Contains(t, empty.body, "Nothing waits for you")
	assert.Contains(t, empty.body, "When an agent needs your approval for a write, or asks you a question, it appears here.")
	var ids []string
	for i := range 3 {
		ids = append(ids, w.Start(alice, fmt.Sprintf("pay alice %d", i+1)))
	}
	first := c.get("/")
	next := regexp.MustCompile(`href="(\?cursor=[^"]+)" rel="next"`).FindStringSubmatch(first.body)
	require.NotNil(t, next, first.body)
	assert.Contains(t, first.body, ids[0])
	assert.NotContains(t, first.body, ids[2])
	second := c.get("/" + strings.ReplaceAll(next[1], "&amp;", "&"))
	assert.Contains(t, second.body, ids[2])
	assert.Contains(t, second.body, "First page")
	assert.NotContains(t, second.body, `rel="next"`)
}

// TestRunIDsInAddresses: run ids with characters that mean something in
// an address (a slash, a colon, a question mark) lead to their own run.
func TestRunIDsInAddresses(t *testing.T) {
	var n int
	w := inboxtest.New(t, &inboxtest.Options{Loop: func(c *react.Config) {
		c.NewRunID = func(context.Context) string { n++; return fmt.Sprintf("javascript:a/b?c#%d", n) }
	}})
	id := w.Start(alice, "pay alice 5")
	c := as(t, w, "acme:alice")
	list := c.get("/")
	assert.Contains(t, list.body, `href="runs/javascript:a%2Fb%3Fc%231"`)
	page := c.open(id)
	assert.Contains(t, page.body, `action="./javascript:a%2Fb%3Fc%231"`)
	r := c.post(runPath(id), form(t, page, "approve", ""))
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.Equal(t, "./javascript:a%2Fb%3Fc%231", r.header.Get("Location"), "relative to the run's own address")
	assert.Equal(t, http.StatusNotFound, c.get("/runs/javascript:a/b").status, "an id must be one segment")
}

// stalling fails every model call of the task "interrupt": the run stops
// interrupted, waiting for the host, not for a person.
type stalling struct{ react.Model }

func (m stalling) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	for _, msg := range req.Messages {
		if msg.Role == react.RoleUser && msg.Content == "interrupt" {
			return react.Response{}, errors.New("the model's server is down")
		}
	}
	return m.Model.Generate(ctx, req)
}

// TestInterrupted: a run interrupted by an error is listed as such, with
// nothing to decide, and its page offers no decision.
func TestInterrupted(t *testing.T) {
	w := inboxtest.New(t, &inboxtest.Options{Loop: func(c *react.Config) { c.Model = stalling{c.Model} }})
	res, err := w.Loop.Run(context.Background(), react.Node{Name: "desk", Tools: []string{"pay"}}, "interrupt", react.WithOwner(alice))
	require.Error(t, err)
	require.Equal(t, react.Interrupted, res.Status)
	c := as(t, w, "acme:alice")
	list := c.get("/?kind=interrupted")
	assert.Contains(t, list.body, "It stopped on an error and goes on when the service continues it; nothing to decide.")
	assert.Contains(t, list.body, `href="runs/`+res.Run+`"`)
	assert.NotContains(t, c.get("/?kind=approval").body, res.Run)
	page := c.open(res.Run)
	assert.Contains(t, page.body, "<h1>Interrupted run</h1>")
	assert.NotContains(t, page.body, "<form")
	var d inbox.DetailJSON
	require.NoError(t, json.Unmarshal([]byte(c.get("/api"+runPath(res.Run)).body), &d))
	assert.Equal(t, "interrupted", d.Pending.Status)
	assert.False(t, d.Pending.Approvable)
	assert.Empty(t, d.Pending.Form, "no decision can be made on it")
}

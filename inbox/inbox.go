package inbox

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
)

// Loop is what the inbox needs of a loop: the methods of [react.Loop] that
// read what stopped runs wait for and resume them with a person's
// decision. A *react.Loop built with Config.Runs (and, to keep the audit
// across processes, Config.Audit) is one; the inbox never calls anything
// else, so a host may wrap these calls (tracing, rate limits) in a type of
// its own.
type Loop interface {
	ListPending(ctx context.Context, f runstore.Filter, opts ...react.RunOption) (react.PendingPage, error)
	Pending(ctx context.Context, id string, opts ...react.RunOption) (react.Pending, error)
	ResumeRun(ctx context.Context, id string, d react.Decision, opts ...react.RunOption) (react.Result, error)
	History(ctx context.Context, id string, opts ...react.RunOption) ([]runstore.Decision, error)
}

var _ Loop = (*react.Loop)(nil)

// Identity is who sent a request, as the host's authentication says.
type Identity struct {
	// Owner selects the runs the person sees and decides: those it covers
	// ([runstore.Owner.Covers]). Owner{Tenant: "acme", User: "alice"}
	// covers alice's runs of acme; Owner{Tenant: "acme"} every run of acme
	// (an approvals team).
	Owner react.Owner
	// Decider is the person's id, recorded with each of their decisions
	// ([react.Decision.DecidedBy]) and shown in the run's history. It is
	// required: an Identity without one is treated as not signed in. At
	// most [react.MaxDecider] bytes of valid UTF-8.
	Decider string
	// Name is shown in the page's header as who is signed in; "" shows
	// Decider.
	Name string
}

// ErrSignIn is what an [Options].Authenticate returns (or wraps) for a
// request that carries no signed-in person: the inbox answers 401 with a
// link to Options.SignInURL. Any other error is a failure of the host's
// authentication: 503, logged, nothing of it shown.
var ErrSignIn = errors.New("inbox: not signed in")

// Options configures [New]. Loop and Authenticate are required; the zero
// value of every other field means its default.
type Options struct {
	// Loop reads and resumes the runs (a *react.Loop with Config.Runs).
	Loop Loop
	// Authenticate returns who sent the request: the host's session
	// cookie, header or certificate, checked the host's way. The inbox
	// stores no password and no session; it calls Authenticate on every
	// request, concurrently. Return [ErrSignIn] when nobody is signed in.
	Authenticate func(r *http.Request) (Identity, error)
	// SignInURL is where the 401 page sends a person who is not signed
	// in; "" shows no link.
	SignInURL string
	// FormKey authenticates the anti-forgery token of every decision form
	// (HMAC-SHA256): at least 32 random bytes, shared by every replica that
	// serves the inbox. Nil means a random key drawn by New: the forms of
	// this handler then work only with this handler (a restart or another
	// replica asks the person to reload the page).
	FormKey []byte
	// FormMaxAge bounds how long a decision form stays valid after it was
	// shown; 0 means 12 hours.
	FormMaxAge time.Duration
	// PageSize is how many runs a page of the list shows; 0 means 20, and
	// it is capped at [runstore.MaxLimit].
	PageSize int
	// Poll is how often an open page's live updates reread what it shows
	// (with JavaScript; without it the person reloads): on the server for
	// a page that follows the inbox's Server-Sent Events, in the browser
	// for one that polls the JSON API. 0 means 5 seconds and a negative
	// value turns live updates off.
	Poll time.Duration
	// Live, when set and observing the loop (see [Live]), updates open
	// pages as soon as a run of this process stops or ends, instead of at
	// the next Poll. Nil means updates every Poll only.
	Live *Live
	// MaxText bounds, in bytes, a decline's reason and a follow-up's
	// answer; 0 means 4,096.
	MaxText int
	// Title is the page's title; "" means "Approvals".
	Title string
	// Logger receives what the pages do not show: store errors with an
	// incident id, runs whose sealed state did not open, refused forms.
	// Nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock of form tokens; nil means time.Now.
	Now func() time.Time
}

// Defaults of [Options].
const (
	DefaultFormMaxAge = 12 * time.Hour
	DefaultPageSize   = 20
	DefaultPoll       = 5 * time.Second
	DefaultMaxText    = 4096
	// MinFormKey is the shortest [Options].FormKey New accepts.
	MinFormKey = 32
	// maxForm bounds the body of a decision (form or JSON).
	maxForm = 64 << 10
)

// Errors of [New].
var (
	// ErrNoLoop: Options.Loop is nil.
	ErrNoLoop = errors.New("inbox: Options.Loop is required")
	// ErrNoAuth: Options.Authenticate is nil.
	ErrNoAuth = errors.New("inbox: Options.Authenticate is required")
	// ErrFormKey: Options.FormKey is shorter than MinFormKey.
	ErrFormKey = errors.New("inbox: Options.FormKey is too short")
)

// Handler is the approvals inbox, an [http.Handler]. It is safe for
// concurrent use and keeps no state but its options and form key.
type Handler struct {
	loop     Loop
	auth     func(*http.Request) (Identity, error)
	signIn   string
	forms    formKey
	pageSize int
	poll     time.Duration
	maxText  int
	title    string
	log      *slog.Logger
	mux      *http.ServeMux
	root     http.Handler
	live     *Live // wakes the live-update streams
}

// New returns the inbox over opts.Loop. Mount it under a path that ends in
// a slash, with that prefix stripped:
//
//	mux.Handle("/approvals/", http.StripPrefix("/approvals", h))
//
// It serves, relative to that path:
//
//	GET  /                the pending approvals and questions of the signed-in owner (HTML)
//	GET  /runs/{id}       one run: the sealed pending call, its arguments and their sources, the history
//	POST /runs/{id}       a decision from that page's forms, then 303 back to it
//	GET  /api/pending     the list as JSON (?kind=approval|follow_up, ?cursor=)
//	GET  /api/runs/{id}   one run as JSON, with its history
//	POST /api/runs/{id}   a decision as JSON: {"decision","ticket","text","form"}
//	GET  /api/events/pending   the list's version as Server-Sent Events, each time it changes
//	GET  /api/events/runs/{id} one run as Server-Sent Events, each time it changes
//	GET  /static/…        the stylesheet and the optional script
//
// Every decision carries the ticket of what the person was shown and an
// anti-forgery token bound to the person, the run and that ticket; every
// POST is also refused when the browser says it comes from another origin
// ([http.CrossOriginProtection]). Runs of another owner answer as if they
// did not exist.
func New(opts Options) (*Handler, error) {
	if opts.Loop == nil {
		return nil, ErrNoLoop
	}
	if opts.Authenticate == nil {
		return nil, ErrNoAuth
	}
	key := opts.FormKey
	if key == nil {
		key = make([]byte, MinFormKey)
		_, _ = rand.Read(key) // never fails (crypto/rand)
	} else if len(key) < MinFormKey {
		return nil, fmt.Errorf("%w: %d bytes; at least %d", ErrFormKey, len(key), MinFormKey)
	}
	h := &Handler{
		loop: opts.Loop, auth: opts.Authenticate, signIn: opts.SignInURL,
		forms:    formKey{key: append([]byte(nil), key...), maxAge: opts.FormMaxAge, now: opts.Now},
		pageSize: opts.PageSize, poll: opts.Poll, maxText: opts.MaxText, title: opts.Title, log: opts.Logger,
		live: opts.Live,
	}
	if h.live == nil {
		h.live = NewLive()
	}
	if h.forms.maxAge <= 0 {
		h.forms.maxAge = DefaultFormMaxAge
	}
	if h.forms.now == nil {
		h.forms.now = time.Now
	}
	switch {
	case h.pageSize <= 0:
		h.pageSize = DefaultPageSize
	case h.pageSize > runstore.MaxLimit:
		h.pageSize = runstore.MaxLimit
	}
	switch {
	case h.poll == 0:
		h.poll = DefaultPoll
	case h.poll < 0:
		h.poll = 0
	}
	if h.maxText <= 0 {
		h.maxText = DefaultMaxText
	}
	if h.title == "" {
		h.title = "Approvals"
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.list)
	mux.HandleFunc("GET /runs/{id...}", h.detail)
	mux.HandleFunc("POST /runs/{id...}", h.decideForm)
	mux.HandleFunc("GET /api/pending", h.apiList)
	mux.HandleFunc("GET /api/runs/{id...}", h.apiRun)
	mux.HandleFunc("POST /api/runs/{id...}", h.apiDecide)
	mux.HandleFunc("GET /api/events/pending", h.listEvents)
	mux.HandleFunc("GET /api/events/runs/{id...}", h.runEvents)
	mux.HandleFunc("GET /static/{file}", h.static)
	mux.HandleFunc("/", h.notFound)
	h.mux = mux
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(h.crossOrigin))
	h.root = cop.Handler(mux)
	return h, nil
}

// ServeHTTP implements [http.Handler]: it sets the security headers of
// every response and serves the inbox's routes (see [New]).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
	hd.Set("Cache-Control", "no-store")
	h.root.ServeHTTP(w, r)
}

// csp allows the inbox's own stylesheet, script and requests, and nothing
// else: no inline script or style, no frames around it, forms posting only
// to itself.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// identify authenticates r; on failure it has answered and returns false.
func (h *Handler) identify(w http.ResponseWriter, r *http.Request, api bool) (Identity, bool) {
	id, err := h.auth(r)
	if err == nil && id.Decider == "" {
		err = fmt.Errorf("%w: the identity has no Decider", ErrSignIn)
	}
	if err == nil {
		if err = id.Owner.Check(); err == nil && len(id.Decider) > react.MaxDecider {
			err = fmt.Errorf("inbox: the identity's Decider has %d bytes; at most %d", len(id.Decider), react.MaxDecider)
		}
	}
	switch {
	case err == nil:
		return id, true
	case errors.Is(err, ErrSignIn):
		h.fail(w, r, api, problem{status: http.StatusUnauthorized, code: "sign_in",
			title: "Sign in first", text: "This page shows the approvals of the person signed in, and nobody is.", signIn: true})
	default:
		h.internal(w, r, api, "authenticate", err)
	}
	return Identity{}, false
}

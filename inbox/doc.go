// Package inbox is the approvals inbox: an [http.Handler] where a person
// sees the approvals and questions their agents' runs wait for, and
// decides.
//
//	h, err := inbox.New(inbox.Options{
//		Loop: loop, // a *react.Loop with Config.Runs and Config.Audit
//		Authenticate: func(r *http.Request) (inbox.Identity, error) {
//			s, ok := sessions.From(r) // the host's own sign-in
//			if !ok {
//				return inbox.Identity{}, inbox.ErrSignIn
//			}
//			return inbox.Identity{Owner: react.Owner{Tenant: s.Org, User: s.User}, Decider: s.Email}, nil
//		},
//		FormKey: formKey, // 32+ random bytes shared by the replicas
//	})
//	mux.Handle("/approvals/", http.StripPrefix("/approvals", h))
//
// # What a person sees
//
// The list shows the stopped runs of the signed-in owner, oldest first: a
// write waiting for approval with its arguments, a question, a run
// interrupted by an error. A run's page shows the write exactly as it
// would run, read from the run's sealed snapshot ([react.Loop.Pending]),
// never from a column anyone could edit: the tool, each argument laid out
// as JSON with where the tool declares it must come from and what holds
// it (the user's request or answer, the result of an earlier call), the
// agent's reason, and the run's history of decisions (who approved,
// declined or answered what, when: [react.Loop.History]). The person
// approves, declines with a reason, or answers.
//
// Every page works without JavaScript: a decision is a form post followed
// by a redirect to the run's page. The small script the pages load shows
// times in the viewer's time zone, sends a form once, updates an open list
// by itself and tells an open page when someone else decided it. It
// learns of changes from the inbox's Server-Sent Events (GET
// /api/events/…), which send what a page shows each time it changed: at
// once when a [Live] observes the loop, and at the latest every
// Options.Poll (runs stopped by another process). A browser without
// EventSource polls the JSON API every Options.Poll instead.
//
// # What a decision is bound to
//
// A decision carries the ticket of the suspension the page showed
// ([react.Suspension].Ticket) and is applied with [react.Loop.ResumeRun]
// by the signed-in person ([react.Decision.DecidedBy]): a double click, a
// replayed form or a stale tab after someone else decided never applies
// to anything but what was shown, and is answered with who decided
// ([react.DecidedError]). A call that names an argument twice is not
// offered for approval (the tool would receive only the last value). A
// decision's request may be cut off: the decision still applies.
//
// # Security
//
// The host authenticates every request (Options.Authenticate); the package
// stores no password and no session. Runs of an owner the person's owner
// does not cover answer exactly as runs that do not exist. Every decision
// needs an anti-forgery token bound to the person, the run and the ticket
// (HMAC under Options.FormKey, valid for Options.FormMaxAge), and a POST
// that the browser says comes from another origin is refused
// ([http.CrossOriginProtection]). Every text of a model, a tool or a
// person is escaped by html/template and never becomes a link;
// characters that are invisible or reverse the direction of text are
// shown as their \u codes. Every answer carries a strict
// Content-Security-Policy (no inline script or style, frame-ancestors
// 'none'), X-Content-Type-Options: nosniff, X-Frame-Options: DENY,
// Referrer-Policy: no-referrer and Cache-Control: no-store. Errors of the
// stores are logged with an incident id and never shown.
//
// # The JSON API
//
// A host that brings its own front end uses GET /api/pending ([ListJSON]),
// GET /api/runs/{id} ([DetailJSON]) and POST /api/runs/{id}
// ([DecisionJSON] in, [ResultJSON] out, [ErrorJSON] on failure), with the
// same authentication, tokens and refusals.
package inbox

package inbox

import (
	"encoding/json"
	"time"

	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/runstore"
	"github.com/reactguard/reactguard/tool"
)

// RunJSON is a stopped run as the JSON API shows it (GET /api/pending,
// GET /api/runs/{id}): what a host's own front end needs to show the
// sealed pending call and send the decision back. Every field is read from
// the run's sealed snapshot, never from a column of the run store.
type RunJSON struct {
	Run    string      `json:"run"`
	Node   string      `json:"node"`
	Owner  react.Owner `json:"owner"`
	Status string      `json:"status"`         // suspended or interrupted
	Kind   string      `json:"kind,omitempty"` // approval or follow_up (suspended runs)
	// Ticket names the suspension shown; a decision sends it back.
	Ticket string `json:"ticket,omitempty"`
	// Form is the anti-forgery token of a decision on this suspension by
	// the signed-in person; a decision sends it back.
	Form string `json:"form,omitempty"`
	// Tool, CallID, Args and Fingerprint are the write waiting for
	// approval, exactly as it would run.
	Tool        string          `json:"tool,omitempty"`
	CallID      string          `json:"call_id,omitempty"`
	Args        json.RawMessage `json:"args,omitempty"`
	Fingerprint string          `json:"fingerprint,omitempty"`
	// Arguments are Args member by member, each with where its value must
	// come from and what holds it.
	Arguments []ArgumentJSON `json:"arguments,omitempty"`
	// Approvable is false when the write repeats an argument name (the
	// tool would receive only the last value): the inbox refuses its
	// approval; decline it.
	Approvable bool      `json:"approvable"`
	Reason     string    `json:"reason,omitempty"`   // the agent's reason for the approval
	Question   string    `json:"question,omitempty"` // the follow-up question
	Sealed     time.Time `json:"sealed"`
	Round      int       `json:"round"`
	// Decided is the decision recorded on this suspension while the run
	// has not moved on from it (its resume is running, or failed and may
	// be given again).
	Decided *runstore.Decision `json:"decided,omitempty"`
}

// ArgumentJSON is one argument of a write waiting for approval.
type ArgumentJSON struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
	// Source is "free", "user" or "result" (tool.SourceKind's text); Tool
	// and Field name the result field for "result".
	Source string `json:"source"`
	Tool   string `json:"tool,omitempty"`
	Field  string `json:"field,omitempty"`
	// Calls are the earlier calls whose results hold the value (result).
	Calls []string `json:"calls,omitempty"`
	// UserText is the index of the user's text that holds the value
	// (user: 0 is the request, then each answer); absent when none does.
	UserText *int `json:"user_text,omitempty"`
	// Shadowed: a later member of the same name replaces this one.
	Shadowed bool `json:"shadowed,omitempty"`
	// Earlier: the value comes from an earlier message of the run's
	// conversation (react.Argument.Earlier).
	Earlier bool `json:"earlier,omitempty"`
}

// ListJSON is the answer of GET /api/pending.
type ListJSON struct {
	Runs []RunJSON `json:"runs"`
	// Skipped counts the runs of the page whose sealed state did not open
	// (logged with why); they are never shown as waiting.
	Skipped int `json:"skipped"`
	// Next continues the listing (?cursor=); "" on the last page.
	Next string `json:"next,omitempty"`
	// Version changes when what the page shows changes.
	Version string `json:"version"`
}

// DetailJSON is the answer of GET /api/runs/{id}.
type DetailJSON struct {
	Run string `json:"run"`
	// Waiting reports whether the run waits (Pending is set); false once
	// it moved on and ended.
	Waiting bool                `json:"waiting"`
	Pending *RunJSON            `json:"pending,omitempty"`
	History []runstore.Decision `json:"history"`
}

// DecisionJSON is the body of POST /api/runs/{id} (Content-Type
// application/json).
type DecisionJSON struct {
	// Decision is "approve", "decline" or "answer".
	Decision string `json:"decision"`
	// Ticket and Form are those of the run shown (RunJSON).
	Ticket string `json:"ticket"`
	Form   string `json:"form"`
	// Text is the reason of a decline (optional) or the answer.
	Text string `json:"text,omitempty"`
}

// ResultJSON is the answer of a decision that applied: the run's status
// after it (finished, failed, suspended, interrupted) and, when it stopped
// again, what it waits for now.
type ResultJSON struct {
	Run     string   `json:"run"`
	Status  string   `json:"status"`
	Pending *RunJSON `json:"pending,omitempty"`
}

// ErrorJSON is the body of every error answer of the JSON API.
type ErrorJSON struct {
	// Error is a stable code: sign_in, not_found, bad_request, form,
	// cross_origin, already_decided, being_applied, stale, ambiguous,
	// not_pending, unreadable, unavailable, too_large, unsupported_media.
	Error   string `json:"error"`
	Message string `json:"message"`
	// Incident names the log record of an internal failure.
	Incident string `json:"incident,omitempty"`
	// Decided is the recorded decision (already_decided).
	Decided *runstore.Decision `json:"decided,omitempty"`
}

func (h *Handler) runJSON(p react.Pending, id Identity) RunJSON {
	j := RunJSON{Run: p.Run, Node: p.Node, Owner: p.Owner, Status: p.Status.String(), Sealed: p.Sealed, Round: p.Round, Decided: p.Decided, Approvable: true}
	s := p.Suspension
	if s == nil {
		j.Approvable = false
		return j
	}
	j.Kind, j.Ticket = s.Kind.String(), s.Ticket
	j.Form = h.forms.issue(id, p.Run, s.Ticket)
	j.Reason, j.Question = s.Reason, s.Question
	if w := s.Approval; w != nil {
		j.Tool, j.CallID, j.Fingerprint = w.Tool, w.CallID, w.Fingerprint
		if json.Valid(w.Args) {
			j.Args = w.Args
		}
		j.Approvable = approvable(p)
		for _, a := range p.Arguments {
			aj := ArgumentJSON{Name: a.Name, Value: a.Value, Source: a.Source.Kind.String(), Calls: a.Calls, Shadowed: a.Shadowed, Earlier: a.Earlier}
			if a.Source.Kind == tool.FromResult {
				aj.Tool, aj.Field = a.Source.Tool, a.Source.Field
			}
			if a.UserText >= 0 {
				n := a.UserText
				aj.UserText = &n
			}
			j.Arguments = append(j.Arguments, aj)
		}
	} else {
		j.Approvable = false
	}
	return j
}

// Package observation defines what one tool call produced, as the model and
// the loop see it: a verdict ([outcome.Outcome]), an error code, a reason, a
// next step, and a payload.
//
// # Construction
//
// An Observation is built only through its factories, which follow §7.1 of
// the specification:
//
//	Success(message, data)
//	Failed(code, reason, next[, data])
//	Rejected(code, reason, next)
//	Deferred(code, reason, next)
//
// A non-success observation without a valid code or without a next step
// cannot exist: the factories panic, as [regexp.MustCompile] does, because
// codes and next steps come from program text (the errcode constants and the
// prompt catalogs), never from a model. Fields are unexported; derive a
// changed copy with [Observation.WithNext]. Decoding JSON applies the same
// rules and returns an error instead of panicking, since persisted data is
// runtime input.
//
// # Zero value
//
// The zero Observation has no verdict: [Observation.Outcome] is the invalid
// zero outcome, which never advances and always stalls, and
// [Observation.IsZero] reports true. It never reads as success, and it
// cannot be marshalled.
//
// # Messages
//
// Reason and next step are kept apart. [Observation.Message] joins them in
// English, "<reason>. Next: <next>"; [Observation.MessageIn] uses a catalog,
// "<原因>。下一步：<下一步>" in Chinese. A success's message is its summary.
//
// # Cause
//
// [Observation.WithCause] attaches the raw error behind a failure (the
// default invoker attaches the tool's error): observers and logs read it
// through [Observation.Cause]. It is never rendered for the model and
// never encoded, so whatever secret a raw error holds stays out of the
// transcript and of snapshots.
//
// Observations are immutable values and safe for concurrent use, provided
// the payload is not mutated after construction.
package observation

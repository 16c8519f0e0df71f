package invoker

import (
	"context"
	"encoding/json"

	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/tool"
)

// Call is one tool call as it travels through the chain. Interceptors that
// change a field pass a modified copy to next; a Call is never shared
// between goroutines by the chain itself.
type Call struct {
	// ID is the model's tool-call id; results are paired with calls by it.
	ID string
	// Name is the tool name the model used.
	Name string
	// Args are the model's raw JSON arguments, unparsed.
	Args json.RawMessage
	// Tool is the resolved definition (nil if the name resolves to nothing;
	// the default invoker then answers REJECTED CATALOG_DENIED).
	Tool *tool.Tool
	// Run identifies the node run the call belongs to; stores key their
	// state by it.
	Run string
	// Round is the loop round, from 1.
	Round int
	// Attempt numbers executions of this call, from 1 (the retry guard
	// increments it).
	Attempt int
	// IdempotencyKey identifies the call for the write ledger and the
	// backend; the write gate assigns it when empty.
	IdempotencyKey string
	// FencingToken is the token of the write ledger's claim the call
	// executes under (tool.Request.FencingToken); the write gate sets it on
	// the call it passes down, zero elsewhere.
	FencingToken uint64
	// Fingerprint is the call's fingerprint, fingerprint.Of(Name, Args)
	// (package github.com/reactguard/reactguard/fingerprint), or empty when
	// nobody computed it yet. The guards that need it (fingerprint, write
	// gate, evidence) compute it when it is empty and pass the call down
	// with it set, so that it is computed once per call; each of them still
	// works alone. Invariant: when not empty it matches Name and Args, so an
	// interceptor that changes Name or Args must clear it, and whoever
	// builds a Call leaves it empty (or copies it only together with the
	// same Name and Args).
	Fingerprint string
	// Require is what the node needs of this tool's results beyond its
	// contract (the latest data, every page); the response contract
	// applies it. The zero value requires nothing more.
	Require tool.Requirement
	// Execution, when not nil, receives the account of the call's
	// execution from the guards (attempts, first and last verdict, reuse,
	// business sufficiency); see [Execution]. The dispatcher owns it and
	// reads it after the handler returned. Nil means nobody wants it.
	Execution *Execution
}

// Handler turns a call into an observation. A tool failure is an
// observation; the error result is reserved for infrastructure failures (a
// store that cannot be reached) and for cancellation of ctx, and then the
// observation is the zero value. Handlers must be safe for concurrent use.
type Handler func(ctx context.Context, call Call) (observation.Observation, error)

// Interceptor wraps a handler: it may act before calling next, instead of
// calling it, and after it returns. Interceptors must be safe for
// concurrent use.
type Interceptor func(ctx context.Context, call Call, next Handler) (observation.Observation, error)

// Chain returns a handler that runs the interceptors around h, the first
// listed outermost. Nil interceptors are skipped. The chain is built once,
// here; calling the result allocates nothing for the chain itself.
func Chain(h Handler, interceptors ...Interceptor) Handler {
	for i := len(interceptors) - 1; i >= 0; i-- {
		ic := interceptors[i]
		if ic == nil {
			continue
		}
		next := h
		h = func(ctx context.Context, call Call) (observation.Observation, error) {
			return ic(ctx, call, next)
		}
	}
	return h
}

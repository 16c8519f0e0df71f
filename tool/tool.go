package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/internal/fastschema"
)

// Effect says whether a tool changes the world. The zero value,
// [Unspecified], is treated as [Write].
type Effect uint8

// The effects.
const (
	Unspecified Effect = 0 // not declared: treated as Write
	Read        Effect = 1 // no side effect; may be repeated and run concurrently
	Write       Effect = 2 // changes the world; passes the write gate
)

// IsWrite reports whether a tool with effect e must pass the write gate:
// true for Write and Unspecified.
func (e Effect) IsWrite() bool { return e != Read }

// String returns read, write or unspecified.
func (e Effect) String() string {
	switch e {
	case Read:
		return "read"
	case Write:
		return "write"
	case Unspecified:
		return "unspecified"
	}
	return "effect(" + strconv.Itoa(int(e)) + ")"
}

// Request is what a tool's function receives. A typed tool built with
// [New] reads it from its context with [RequestFrom].
type Request struct {
	// Run is the id of the run the call belongs to; empty when the tool
	// is called outside a run.
	Run string
	// CallID is the model's id of the tool call.
	CallID string
	// Args are the raw JSON arguments, already checked against the tool's
	// input schema by the arg policy guard when it is in the chain.
	Args json.RawMessage
	// Attempt numbers executions of the same call, from 1.
	Attempt int
	// IdempotencyKey identifies the call (run, tool and canonical
	// arguments); a write should pass it to its backend so that a retried or
	// verified write is applied at most once. Empty when the runtime assigned
	// none.
	IdempotencyKey string
	// FencingToken is the token of the write ledger's claim under which
	// this execution runs: every claim of a key gets a larger token than
	// any earlier claim in the same ledger (stores/postgres and
	// stores/sqlite draw them from one counter per database). A backend
	// that remembers the largest token it accepted for a key (or for the
	// resource the write changes) and refuses a request with a smaller one
	// refuses a holder whose claim was taken over after it lost its lease
	// (see docs/architecture.md, "Failover"): the request that such a
	// holder sent before its context was cancelled and that arrives late.
	// Zero when the write ledger issues no tokens, and for reads.
	FencingToken uint64
}

// Func runs a tool. It returns the tool's payload or an error; see the
// package documentation for how errors are classified. It must honour ctx.
type Func func(ctx context.Context, req Request) (any, error)

// Tool is one tool an agent may call. Only Name, InputSchema and Func are
// required; every other field is optional. A Tool must not be changed after
// it was added to a [Catalog].
type Tool struct {
	// Name is what the model calls the tool; unique within a catalog.
	Name string
	// Description tells the model what the tool does.
	Description string
	// InputSchema is the JSON Schema of the arguments object. Required.
	InputSchema *jsonschema.Schema
	// Effect is Read or Write; Unspecified counts as Write.
	Effect Effect
	// Func runs the tool. Required.
	Func Func
	// Timeout bounds one execution; 0 means no bound beyond the caller's
	// context (the invoker may apply a default).
	Timeout time.Duration
	// Contract decides business failure, result shape and empty results.
	Contract *Contract
	// Params declares where parameter values must come from, keyed by
	// top-level parameter name. Parameters not listed are free.
	Params map[string]Source
	// Verify looks up a write by idempotency key; the write gate calls it
	// before executing again a write whose earlier result is uncertain.
	Verify VerifyFunc
	// Pollable opts the tool out of the fingerprint guard: calling it again
	// with the same arguments is expected (a job status, say).
	Pollable bool
	// Retry is the tool's retry policy; nil means no retry.
	Retry *RetryPolicy

	resolved *jsonschema.Resolved
}

// Resolved returns the tool's resolved input schema, or nil if t is nil or
// was not added to a [Catalog].
func (t *Tool) Resolved() *jsonschema.Resolved {
	if t == nil {
		return nil
	}
	return t.resolved
}

// prepare validates t and resolves its schema.
func (t *Tool) prepare() error {
	if t.Name == "" {
		return errors.New("tool: a tool needs a name")
	}
	if strings.HasPrefix(t.Name, evidence.StepPrefix) {
		return fmt.Errorf("tool %q: names starting with %q are reserved for the outputs of a task's steps", t.Name, evidence.StepPrefix)
	}
	if t.Func == nil {
		return fmt.Errorf("tool %q: no Func", t.Name)
	}
	if t.InputSchema == nil {
		return fmt.Errorf("tool %q: no InputSchema", t.Name)
	}
	if !isObjectSchema(t.InputSchema) {
		return fmt.Errorf("tool %q: the input schema is not an object schema (%s): tool arguments are a JSON object; set its Type to \"object\" (with tool.New, use a struct or map type for the arguments)", t.Name, schemaTypes(t.InputSchema))
	}
	if t.Timeout < 0 {
		return fmt.Errorf("tool %q: negative Timeout", t.Name)
	}
	rs, err := t.InputSchema.Resolve(nil)
	if err != nil {
		return fmt.Errorf("tool %q: input schema: %w", t.Name, err)
	}
	t.resolved = rs
	if t.Contract != nil && t.Contract.Output != nil {
		out, err := t.Contract.Output.Resolve(nil)
		if err != nil {
			return fmt.Errorf("tool %q: output schema: %w", t.Name, err)
		}
		t.Contract.resolved = out
	}
	if t.Contract != nil {
		if err := t.Contract.check(func(p string) bool { _, ok := t.InputSchema.Properties[p]; return ok }); err != nil {
			return fmt.Errorf("tool %q: contract: %w", t.Name, err)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(t.Params)) {
		if _, ok := t.InputSchema.Properties[p]; !ok {
			return fmt.Errorf("tool %q: Params names %q, which is not a parameter of its input schema (it has %s); use a top-level property name", t.Name, p, propertyList(t.InputSchema))
		}
		if err := t.Params[p].check(); err != nil {
			return fmt.Errorf("tool %q: parameter %q: %w", t.Name, p, err)
		}
	}
	if t.Retry != nil && t.Retry.Attempts < 0 {
		return fmt.Errorf("tool %q: negative retry attempts", t.Name)
	}
	return nil
}

// isObjectSchema reports whether s admits only JSON objects (null aside):
// Type "object", or Types holding "object" and at most "null" besides.
func isObjectSchema(s *jsonschema.Schema) bool {
	if s.Type != "" {
		return s.Type == "object"
	}
	if len(s.Types) == 0 {
		return false
	}
	object := false
	for _, ty := range s.Types {
		switch ty {
		case "object":
			object = true
		case "null":
		default:
			return false
		}
	}
	return object
}

// schemaTypes describes the types a schema declares, for an error.
func schemaTypes(s *jsonschema.Schema) string {
	switch {
	case s.Type != "":
		return "type " + strconv.Quote(s.Type)
	case len(s.Types) > 0:
		return "types " + strings.Join(s.Types, ", ")
	}
	return "no type"
}

// propertyList names a schema's top-level properties, for an error.
func propertyList(s *jsonschema.Schema) string {
	if len(s.Properties) == 0 {
		return "no properties"
	}
	names := slices.Sorted(maps.Keys(s.Properties))
	return "properties " + strings.Join(names, ", ")
}

// New returns a tool whose input schema is inferred from In by
// github.com/google/jsonschema-go (struct fields without omitempty are
// required; additionalProperties is false) and whose function decodes the
// arguments into an In and calls fn with a context that carries the call's
// [Request] (read it with [RequestFrom]: the idempotency key of a write,
// the run and call ids). Decoding is as strict as the schema:
// unknown fields and trailing data are errors. Empty arguments leave In at
// its zero value. A decoding failure is returned as an [*ArgsError] (the
// default invoker answers REJECTED ARG_JSON_INVALID) and fn is not called.
//
// Set the optional fields (Effect, Contract, ...) on the returned value
// before adding it to a catalog. New panics if no schema can be inferred for
// In, or if In is not a struct or map type (tool arguments are a JSON
// object): programming errors, like regexp.MustCompile's.
func New[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) *Tool {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool.New(%q): %v", name, err))
	}
	if !isObjectSchema(schema) {
		panic(fmt.Sprintf("tool.New(%q): the arguments type %s has %s, not an object: use a struct (or map) type for a tool's arguments", name, reflect.TypeFor[In](), schemaTypes(schema)))
	}
	// The inferred schema names every field and forbids others, so
	// arguments it surely accepts hold no unknown field and decode with
	// json.Unmarshal exactly as with a strict decoder, for less.
	fast, _ := fastschema.Compile(schema)
	return &Tool{
		Name:        name,
		Description: description,
		InputSchema: schema,
		Func: func(ctx context.Context, req Request) (any, error) {
			var in In
			if len(req.Args) > 0 {
				if err := decodeArgs(fast, req.Args, &in); err != nil {
					return nil, &ArgsError{Tool: name, Err: err}
				}
			}
			return fn(ContextWithRequest(ctx, req), in)
		},
	}
}

// requestKey is the context key of a call's [Request].
type requestKey struct{}

// requestCtx carries a call's Request. It holds the request by value and
// answers Value for requestKey with a pointer to it, so that a typed
// tool's call costs one allocation rather than a value context and a boxed
// Request; every other key is its parent's.
type requestCtx struct {
	context.Context
	req Request
}

// Value returns the request for requestKey, else the parent's value.
func (c *requestCtx) Value(key any) any {
	if _, ok := key.(requestKey); ok {
		return &c.req
	}
	return c.Context.Value(key)
}

// ContextWithRequest returns a copy of ctx carrying req, which
// [RequestFrom] returns. The function of a tool built with [New] receives
// such a context; call it yourself only to hand a request to code that
// reads it the same way (a typed helper called from a raw [Func], a test).
// The context is done, and has a deadline, exactly when ctx has.
func ContextWithRequest(ctx context.Context, req Request) context.Context {
	return &requestCtx{Context: ctx, req: req}
}

// RequestFrom returns the [Request] of the tool call ctx belongs to: the
// run id, the call id, the attempt and, for a write that passed the write
// gate, the idempotency key to pass to the backend, so that a retried or
// re-submitted write is applied at most once. A typed tool built with
// [New] reads it from the context its function receives:
//
//	create := tool.New("create_site", "…", func(ctx context.Context, in createIn) (Site, error) {
//		req, _ := tool.RequestFrom(ctx)
//		return backend.CreateSite(ctx, in.Name, in.SpaceID, req.IdempotencyKey)
//	})
//
// It reports false for a context that carries no request. Its Args are
// the raw arguments the typed value was decoded from; do not modify them.
func RequestFrom(ctx context.Context) (Request, bool) {
	req, ok := ctx.Value(requestKey{}).(*Request)
	if !ok || req == nil {
		return Request{}, false
	}
	return *req, true
}

// decodeArgs decodes one JSON value into v, refusing unknown fields and
// trailing data.
func decodeArgs(fast *fastschema.Schema, data []byte, v any) error {
	if fast != nil && fast.Valid(data) && len(bytes.TrimSpace(data)) > 0 && json.Unmarshal(data, v) == nil {
		return nil // no unknown field can be there, no data after the object
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errTrailing
	}
	return nil
}

// errTrailing reports data after the arguments object.
var errTrailing = errors.New("unexpected data after the arguments object")

package reacttest

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reactguard/reactguard/tool"
)

// Fake is a fake tool that counts its executions. Tool is the tool to add
// to a [tool.Catalog]: by default a [tool.Read] tool taking any JSON
// object. Change its fields (Effect, InputSchema, Params, Timeout,
// Contract, Verify, ...) before adding it to a catalog, or use
// [Fake.Write]. A Fake is safe for concurrent use.
type Fake struct {
	// Tool is the fake's tool. Its Func counts every execution, then does
	// what the constructor promised.
	Tool *tool.Tool

	mu   sync.Mutex
	reqs []tool.Request
}

// Respond returns a fake tool named name that runs fn. fn must not be nil.
func Respond(name string, fn tool.Func) *Fake {
	if fn == nil {
		panic("reacttest.Respond: nil function")
	}
	f := &Fake{}
	f.Tool = &tool.Tool{
		Name:        name,
		Description: "fake tool " + name,
		InputSchema: &jsonschema.Schema{Type: "object"},
		Effect:      tool.Read,
		Func: func(ctx context.Context, req tool.Request) (any, error) {
			req.Args = slices.Clone(req.Args)
			f.mu.Lock()
			f.reqs = append(f.reqs, req)
			f.mu.Unlock()
			return fn(ctx, req)
		},
	}
	return f
}

// Succeed returns a fake tool that returns payload on every call.
func Succeed(name string, payload any) *Fake {
	return Respond(name, func(context.Context, tool.Request) (any, error) { return payload, nil })
}

// Fail returns a fake tool that fails with the typed error of kind k (see
// [tool.Classified]) and message: the default invoker turns it into FAILED
// with [tool.Kind.Code], for example [tool.KindNotFound] into
// TOOL_NOT_FOUND.
func Fail(name string, k tool.Kind, message string) *Fake {
	return FailWith(name, tool.Classified(k, message, nil))
}

// FailWith returns a fake tool that returns err on every call.
func FailWith(name string, err error) *Fake {
	return Respond(name, func(context.Context, tool.Request) (any, error) { return nil, err })
}

// Timeout returns a fake tool that blocks until its context is done and
// returns the context's error, with Tool.Timeout set to after: the default
// invoker stops it after that long and reports FAILED TOOL_TIMEOUT. after 0
// leaves the bound to the invoker's default timeout or the caller's
// context. Run tests that use it inside [testing/synctest] to make the wait
// instant.
func Timeout(name string, after time.Duration) *Fake {
	f := Respond(name, func(ctx context.Context, _ tool.Request) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	f.Tool.Timeout = after
	return f
}

// BusinessFail returns a fake tool that answers like an HTTP 200 whose body
// reports a failure: {"code": code, "message": message}. Its Contract is
// [BusinessCodeContract](system), so the response contract guard turns the
// result into FAILED TOOL_BUSINESS_FAILED with the downstream code
// system.code in the reason. code must not be 0.
func BusinessFail(name, system string, code int, message string) *Fake {
	if code == 0 {
		panic("reacttest.BusinessFail: code 0 means success")
	}
	f := Succeed(name, map[string]any{"code": code, "message": message})
	f.Tool.Contract = BusinessCodeContract(system)
	return f
}

// Empty returns a fake tool that returns an empty list, with a Contract
// whose Empty field is policy: [tool.EmptyAllowed] makes the empty result a
// SUCCESS, [tool.EmptyFails] a FAILED TOOL_RESULT_EMPTY.
func Empty(name string, policy tool.EmptyPolicy) *Fake {
	f := Succeed(name, []any{})
	f.Tool.Contract = &tool.Contract{Empty: policy}
	return f
}

// Panic returns a fake tool that panics with value on every call: the
// default invoker recovers it and reports FAILED TOOL_ERROR.
func Panic(name string, value any) *Fake {
	return Respond(name, func(context.Context, tool.Request) (any, error) { panic(value) })
}

// Write sets the tool's effect to [tool.Write] and returns f, so a fake
// passes the write gate: reacttest.Succeed("create_site", site).Write().
// Call it before adding the tool to a catalog.
func (f *Fake) Write() *Fake {
	f.Tool.Effect = tool.Write
	return f
}

// Executions returns how many times the tool's function ran (a call that
// panicked or timed out counts).
func (f *Fake) Executions() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

// Requests returns copies of the requests the tool ran with, in order.
func (f *Fake) Requests() []tool.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// BusinessCodeContract returns a response contract for bodies of the form
// {"code": <number or numeric string>, "message": "..."}, where a code
// other than 0 is a business failure even though the call returned: the
// failure's downstream code is system.code (just code when system is "")
// and its message the body's message. A result that has no code field,
// or is not a JSON object, passes. The result may be a map, a struct, a
// []byte or a [json.RawMessage] holding JSON.
func BusinessCodeContract(system string) *tool.Contract {
	return &tool.Contract{
		Business: func(result any) (bool, string, string) {
			code, message, ok := readCode(result)
			if !ok || code == "0" {
				return false, "", ""
			}
			if system != "" {
				code = system + "." + code
			}
			return true, code, message
		},
	}
}

// readCode extracts the code field (as text) and message of a body.
func readCode(result any) (code, message string, ok bool) {
	var raw []byte
	switch r := result.(type) {
	case json.RawMessage:
		raw = r
	case []byte:
		raw = r
	default:
		b, err := json.Marshal(result)
		if err != nil {
			return "", "", false
		}
		raw = b
	}
	var body struct {
		Code    any    `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return "", "", false
	}
	switch c := body.Code.(type) {
	case float64:
		return strconv.FormatFloat(c, 'f', -1, 64), body.Message, true
	case string:
		f, err := strconv.ParseFloat(c, 64)
		if err != nil {
			return "", "", false
		}
		if f == 0 {
			return "0", body.Message, true
		}
		return c, body.Message, true
	}
	return "", "", false // no code, or a code that is not a number
}

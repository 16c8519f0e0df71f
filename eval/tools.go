package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reactguard/reactguard/fingerprint"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

// fakes is the catalog of one run of a case, with the fakes' state: how
// often each tool executed and each response was used, and the keys the
// write gate verified.
type fakes struct {
	catalog  *tool.Catalog
	mu       sync.Mutex
	execs    map[string]int
	used     map[string][]int // tool → uses of each response
	specs    map[string]*ToolSpec
	verified map[string]tool.WriteStatus // idempotency key → what Verify answered
}

// verifiedAs returns what the tool's Verify answered for key, if it was
// asked.
func (f *fakes) verifiedAs(key string) (tool.WriteStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.verified[key]
	return st, ok
}

// allExecutions returns how often each tool of the case executed.
func (f *fakes) allExecutions() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int, len(f.specs))
	for name := range f.specs {
		out[name] = f.execs[name]
	}
	return out
}

// executions returns how often the tool name executed.
func (f *fakes) executions(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.execs[name]
}

// catalog builds the case's tools, fresh for one run.
func (c *Case) catalog() (*fakes, error) {
	f := &fakes{execs: map[string]int{}, used: map[string][]int{}, specs: map[string]*ToolSpec{}, verified: map[string]tool.WriteStatus{}}
	tools := make([]*tool.Tool, 0, len(c.Tools))
	for i := range c.Tools {
		s := &c.Tools[i]
		t, err := f.build(s)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", s.Name, err)
		}
		if _, dup := f.specs[s.Name]; dup {
			return nil, fmt.Errorf("tool %q defined twice", s.Name)
		}
		f.specs[s.Name] = s
		tools = append(tools, t)
	}
	for _, s := range f.specs {
		for i, r := range s.Responses {
			if _, ok := f.specs[r.After]; r.After != "" && !ok {
				return nil, fmt.Errorf("tool %q: response %d: after %q is not a tool of the case", s.Name, i+1, r.After)
			}
		}
	}
	cat, err := tool.NewCatalog(tools...)
	if err != nil {
		return nil, err
	}
	f.catalog = cat
	return f, nil
}

// build turns a tool spec into a tool whose function answers from the
// spec's responses.
func (f *fakes) build(s *ToolSpec) (*tool.Tool, error) {
	if s.Name == "" {
		return nil, errors.New("no name")
	}
	if len(s.Responses) == 0 {
		return nil, errors.New("no responses")
	}
	t := &tool.Tool{Name: s.Name, Description: s.Description, Pollable: s.Pollable}
	switch s.Effect {
	case "read":
		t.Effect = tool.Read
	case "write":
		t.Effect = tool.Write
	default:
		return nil, fmt.Errorf("effect %q (want read or write)", s.Effect)
	}
	t.InputSchema = &jsonschema.Schema{Type: "object"}
	if len(bytes.TrimSpace(s.InputSchema)) > 0 {
		t.InputSchema = new(jsonschema.Schema)
		if err := json.Unmarshal(s.InputSchema, t.InputSchema); err != nil {
			return nil, fmt.Errorf("input_schema: %w", err)
		}
	}
	for name, p := range s.Params {
		src, err := p.source()
		if err != nil {
			return nil, fmt.Errorf("param %q: %w", name, err)
		}
		if t.Params == nil {
			t.Params = map[string]tool.Source{}
		}
		t.Params[name] = src
	}
	if s.Retry != nil {
		t.Retry = &tool.RetryPolicy{Attempts: s.Retry.Attempts}
	}
	if s.Contract != nil {
		c, err := s.Contract.contract()
		if err != nil {
			return nil, fmt.Errorf("contract: %w", err)
		}
		t.Contract = c
	}
	for i, r := range s.Responses {
		if r.Error != nil {
			if _, err := r.Error.err(); err != nil {
				return nil, fmt.Errorf("response %d: %w", i+1, err)
			}
		}
		for k, v := range r.Match {
			if _, err := fingerprint.Canonical(v); err != nil {
				return nil, fmt.Errorf("response %d: match %q: %w", i+1, k, err)
			}
		}
		if len(r.Result) > 0 && !json.Valid(r.Result) {
			return nil, fmt.Errorf("response %d: result is not JSON", i+1)
		}

	}
	if s.Verify != nil {
		v, err := s.Verify.verify()
		if err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		t.Verify = func(ctx context.Context, key string) (tool.WriteStatus, any, error) {
			st, res, err := v(ctx, key)
			f.mu.Lock()
			f.verified[key] = st
			f.mu.Unlock()
			return st, res, err
		}
	}
	name := s.Name
	t.Func = func(ctx context.Context, req tool.Request) (any, error) {
		r := f.respond(name, req.Args)
		if r == nil {
			return nil, fmt.Errorf("the fake tool %s has no response for arguments %s", name, req.Args)
		}
		if r.Error != nil {
			err, _ := r.Error.err()
			return nil, err
		}
		if len(r.Result) == 0 {
			return json.RawMessage("null"), nil
		}
		return r.Result, nil
	}
	return t, nil
}

// respond counts an execution of the tool and picks its response: the
// first whose Match holds and whose Times is not used up.
func (f *fakes) respond(name string, args json.RawMessage) *Response {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.execs[name]++
	s := f.specs[name]
	used := f.used[name]
	if used == nil {
		used = make([]int, len(s.Responses))
		f.used[name] = used
	}
	var top map[string]json.RawMessage
	_ = json.Unmarshal(args, &top) // arguments that are not an object match only empty Match
	for i := range s.Responses {
		r := &s.Responses[i]
		if r.Times > 0 && used[i] >= r.Times {
			continue
		}
		if r.After != "" && f.execs[r.After] == 0 {
			continue
		}
		if !matches(r.Match, top) {
			continue
		}
		used[i]++
		return r
	}
	return nil
}

// matches reports whether every argument of want equals the call's
// argument canonically.
func matches(want, got map[string]json.RawMessage) bool {
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return false
		}
		cw, err1 := fingerprint.Canonical(w)
		cg, err2 := fingerprint.Canonical(g)
		if err1 != nil || err2 != nil || !bytes.Equal(cw, cg) {
			return false
		}
	}
	return true
}

func (p ParamSource) source() (tool.Source, error) {
	switch p.From {
	case "user":
		return tool.User(), nil
	case "result":
		if p.Tool == "" || p.Field == "" {
			return tool.Source{}, errors.New(`from "result" needs tool and field`)
		}
		return tool.Result(p.Tool, p.Field), nil
	case "step":
		if p.Step == "" || p.Field == "" {
			return tool.Source{}, errors.New(`from "step" needs step and field`)
		}
		return tool.Step(p.Step, p.Field), nil
	case "free", "":
		return tool.Free(), nil
	}
	return tool.Source{}, fmt.Errorf("from %q (want user, result, step or free)", p.From)
}

func (e *ErrorSpec) err() (error, error) {
	msg := e.Message
	switch e.Kind {
	case "not_found":
		return tool.Classified(tool.KindNotFound, msg, nil), nil
	case "forbidden":
		return tool.Classified(tool.KindForbidden, msg, nil), nil
	case "unavailable":
		return tool.Classified(tool.KindUnavailable, msg, nil), nil
	case "rate_limited":
		return tool.Classified(tool.KindRateLimited, msg, nil), nil
	case "timeout":
		return tool.Classified(tool.KindTimeout, msg, nil), nil
	case "unreachable":
		return tool.Classified(tool.KindUnreachable, msg, nil), nil
	case "io":
		return tool.Classified(tool.KindIO, msg, nil), nil
	case "too_large":
		return tool.Classified(tool.KindTooLarge, msg, nil), nil
	case "business":
		if e.Code == "" {
			return nil, errors.New(`error kind "business" needs a code`)
		}
		return tool.BusinessFailure(e.Code, msg), nil
	case "error":
		return errors.New(msg), nil
	}
	return nil, fmt.Errorf("error kind %q (want not_found, forbidden, unavailable, rate_limited, timeout, unreachable, io, too_large, business or error)", e.Kind)
}

func (v *VerifySpec) verify() (tool.VerifyFunc, error) {
	var st tool.WriteStatus
	switch v.Status {
	case "applied":
		st = tool.WriteApplied
	case "not_applied":
		st = tool.WriteNotApplied
	case "unknown":
		st = tool.WriteUnknown
	default:
		return nil, fmt.Errorf("status %q (want applied, not_applied or unknown)", v.Status)
	}
	var result any
	if len(v.Result) > 0 {
		result = v.Result
	}
	return func(context.Context, string) (tool.WriteStatus, any, error) { return st, result, nil }, nil
}

func (c *ContractSpec) contract() (*tool.Contract, error) {
	out := &tool.Contract{}
	switch c.Empty {
	case "", "allowed":
	case "fails":
		out.Empty = tool.EmptyFails
	case "answer":
		out.Empty = tool.EmptyAnswers
	default:
		return nil, fmt.Errorf("empty %q (want allowed, fails or answer)", c.Empty)
	}
	if err := c.apply(out); err != nil {
		return nil, err
	}
	if c.BusinessCode != "" {
		out.Business = reacttest.BusinessCodeContract(c.BusinessCode).Business
	}
	if len(bytes.TrimSpace(c.Output)) > 0 {
		out.Output = new(jsonschema.Schema)
		if err := json.Unmarshal(c.Output, out.Output); err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
	}
	if len(c.Sufficient) > 0 {
		conds := c.Sufficient
		for i, k := range conds {
			if strings.TrimSpace(k.Path) == "" {
				return nil, fmt.Errorf("sufficient condition %d has no path", i+1)
			}
			if len(k.Equals) > 0 && !json.Valid(k.Equals) {
				return nil, fmt.Errorf("sufficient condition %d: equals is not JSON", i+1)
			}
		}
		out.Sufficient = func(result any) (bool, string) {
			raw, err := json.Marshal(result)
			if err != nil {
				return false, "the result is not JSON"
			}
			var v any
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if dec.Decode(&v) != nil {
				return false, "the result is not JSON"
			}
			for _, k := range conds {
				if !k.holds(v) {
					reason := k.Reason
					if reason == "" {
						reason = "the result does not meet " + k.Path
					}
					return false, reason
				}
			}
			return true, ""
		}
	}
	return out, nil
}

// holds reports whether the condition holds on the decoded result v.
func (k Condition) holds(v any) bool {
	vals := at(v, strings.Split(k.Path, "."))
	if len(vals) == 0 {
		return false
	}
	if k.MinItems > 0 {
		ok := false
		for _, x := range vals {
			if a, isArr := x.([]any); isArr && len(a) >= k.MinItems {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	if len(k.Equals) > 0 {
		want, err := fingerprint.Canonical(k.Equals)
		if err != nil {
			return false
		}
		for _, x := range vals {
			b, err := json.Marshal(x)
			if err != nil {
				continue
			}
			if got, err := fingerprint.Canonical(b); err == nil && bytes.Equal(got, want) {
				return true
			}
		}
		return false
	}
	return true
}

// at returns the values at path in v; arrays on the way are walked (every
// element), a null value does not exist.
func at(v any, path []string) []any {
	if len(path) == 0 {
		if v == nil {
			return nil
		}
		return []any{v}
	}
	switch x := v.(type) {
	case map[string]any:
		e, ok := x[path[0]]
		if !ok {
			return nil
		}
		return at(e, path[1:])
	case []any:
		var out []any
		for _, e := range x {
			out = append(out, at(e, path)...)
		}
		return out
	}
	return nil
}

package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/evidence"
	"github.com/reactguard/reactguard/internal/jsonvalid"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// ParamPolicy is a host's own check of a parameter value, run by
// [ParamContract] after the value passed its source check. It returns nil
// to accept value (the parameter's raw JSON), or an error whose text says
// why the value is refused; that text (its first line, clipped by
// tool.ClipDetail) becomes the detail of the PARAM_PROVENANCE_REJECTED
// reason the model reads, so it must not carry secrets. A ParamPolicy must be safe for concurrent use and must not
// block for long; it has no way to report an infrastructure failure.
type ParamPolicy func(ctx context.Context, call invoker.Call, param string, value json.RawMessage) error

// ParamContractOptions configures [ParamContract]. Only Ledger is
// required.
type ParamContractOptions struct {
	// Ledger holds the run's evidence: the successful results and the
	// user's words. Required; the same ledger the [Evidence] guard writes.
	Ledger evidence.Ledger
	// Catalog renders reasons and next steps; nil means English.
	Catalog *prompt.Catalog
	// Policy, when set, is asked about every parameter the tool declares in
	// tool.Tool.Params (free ones included) whose value is present and
	// passed its source check. Nil accepts every such value.
	Policy ParamPolicy
}

// ParamContract returns the param-contract guard (see the package
// documentation for its place in the chain). For each top-level parameter
// the called tool declares in tool.Tool.Params, in name order, it checks
// where the value comes from:
//
//   - tool.FromUser: every scalar of the value must appear in the user's
//     words ([evidence.Ledger.UserSaid]). A value the user did not say is
//     REJECTED PARAM_PROVENANCE_MISMATCH when it appears in a successful
//     tool result of the run, as a value or as a word of a text
//     ([evidence.Ledger.HasValue] with no tool) — it came from an
//     untrusted result, which must never
//     reach a parameter the contract reserves for the user — and
//     PARAM_PROVENANCE_FOLLOW_UP_FIRST otherwise (the model must ask).
//   - tool.FromResult(X, field): without a successful result of X yet,
//     REJECTED PARAM_PROVENANCE_QUERY_FIRST; otherwise every scalar of the
//     value must be a value of field in a successful result of X
//     ([evidence.Ledger.HasValue]), else REJECTED PARAM_PROVENANCE_MISMATCH.
//   - tool.Step(step, key): the run must have received step's verified
//     outputs ([evidence.StepRef]; a task hands them on), else REJECTED
//     PARAM_PROVENANCE_STEP_MISSING; every scalar of the value must be a
//     value of output key in them, else REJECTED
//     PARAM_PROVENANCE_MISMATCH. A value of the run's own tool results,
//     of the user's words or of the model's own does not pass.
//   - tool.FromAny: no source check.
//
// Then Policy, when set, may refuse the value: REJECTED
// PARAM_PROVENANCE_REJECTED. The first failing parameter decides; a
// rejected call does not reach next.
//
// Argument names match declared parameters without regard to case, and
// every occurrence of a repeated name is checked, because encoding/json
// decodes "Site_ID" into a field named site_id and keeps the last of
// repeated keys: no spelling of a name gets a value past its contract.
//
// Scalars of a value are its strings, numbers and booleans, in arrays and
// objects too (each must pass; an empty array or object has none to
// trace); they compare as [evidence.Walk] prints them, so 42 and "42" are
// the same value. A parameter that is absent or JSON null is skipped (required parameters are the arg policy's job), and
// so are calls without a tool, without declared parameters, or whose
// arguments are not a JSON object. Each check is a constant number of
// ledger lookups: its cost does not grow with the evidence the run holds
// (UserSaid grows only with the length of the user's words).
//
// A ledger error is returned as a Go error with the zero observation. It
// panics if opts.Ledger is nil (a programming error). The interceptor is
// safe for concurrent use.
func ParamContract(opts ParamContractOptions) invoker.Interceptor {
	if opts.Ledger == nil {
		panic("guard.ParamContract: ParamContractOptions.Ledger is nil")
	}
	pc := &paramContract{ledger: opts.Ledger, cat: opts.Catalog, policy: opts.Policy}
	return pc.intercept
}

type paramContract struct {
	ledger evidence.Ledger
	cat    *prompt.Catalog
	policy ParamPolicy
	names  sync.Map // *tool.Tool -> []string, its declared parameters in name order
}

// paramNames returns t's declared parameters in name order. Tools do not
// change once in a catalog, so the order is computed once per tool.
func (pc *paramContract) paramNames(t *tool.Tool) []string {
	if v, ok := pc.names.Load(t); ok {
		return v.([]string)
	}
	names := slices.Sorted(maps.Keys(t.Params))
	pc.names.Store(t, names)
	return names
}

func (pc *paramContract) intercept(ctx context.Context, call invoker.Call, next invoker.Handler) (observation.Observation, error) {
	t := call.Tool
	if t == nil || len(t.Params) == 0 {
		return next(ctx, call)
	}
	var buf [8]member
	members, ok := objectMembers(call.Args, buf[:0])
	if !ok {
		return next(ctx, call) // not a JSON object: the arg policy's job
	}
	for _, name := range pc.paramNames(t) {
		for _, m := range members {
			// encoding/json matches struct fields without regard to case,
			// so "Site_ID" reaches a tool's site_id: check it as site_id.
			if !m.keyFold(name) {
				continue
			}
			obs, err := pc.check(ctx, call, name, t.Params[name], m.value)
			if err != nil {
				return observation.Observation{}, err
			}
			if !obs.IsZero() {
				return obs, nil
			}
		}
	}
	return next(ctx, call)
}

// check returns a REJECTED observation for a value that breaks its
// contract, or the zero observation when it passes.
func (pc *paramContract) check(ctx context.Context, call invoker.Call, name string, src tool.Source, raw json.RawMessage) (observation.Observation, error) {
	if string(raw) == "null" {
		return observation.Observation{}, nil // given as nothing: the arg policy's job
	}
	var buf [4]string // most values hold a scalar or a few: no allocation for them
	scalars := buf[:0]
	_ = evidence.Walk(raw, func(_, text string) bool { // raw came out of a parsed object
		scalars = append(scalars, text)
		return true
	})
	kind := src.Kind
	if len(scalars) == 0 {
		kind = tool.FromAny // [] or {}: no value to trace
	}
	switch kind {
	case tool.FromUser:
		for _, v := range scalars {
			said, err := pc.ledger.UserSaid(ctx, call.Run, v)
			if err != nil {
				return observation.Observation{}, pcErr("UserSaid", err)
			}
			if said {
				continue
			}
			inResult, err := pc.ledger.HasValue(ctx, call.Run, "", "", v)
			if err != nil {
				return observation.Observation{}, pcErr("HasValue", err)
			}
			if inResult {
				return pc.mismatch(call, name, pc.cat.Text(prompt.SourceUser)), nil
			}
			return observation.Rejected(errcode.ParamProvenanceFollowUpFirst,
				pc.cat.Reason(errcode.ParamProvenanceFollowUpFirst, "tool", call.Tool.Name, "param", name, "source", pc.cat.Text(prompt.SourceUser)),
				pc.cat.Text(prompt.NextFollowUpFirst, "param", name, "tool", call.Tool.Name)), nil
		}
	case tool.FromResult:
		has, err := pc.ledger.HasResult(ctx, call.Run, src.Tool)
		if err != nil {
			return observation.Observation{}, pcErr("HasResult", err)
		}
		if !has {
			return observation.Rejected(errcode.ParamProvenanceQueryFirst,
				pc.cat.Reason(errcode.ParamProvenanceQueryFirst, "tool", call.Tool.Name, "param", name, "source", src.Tool),
				pc.cat.Text(prompt.NextQueryFirst, "source", src.Tool, "param", name, "tool", call.Tool.Name)), nil
		}
		for _, v := range scalars {
			ok, err := pc.ledger.HasValue(ctx, call.Run, src.Tool, src.Field, v)
			if err != nil {
				return observation.Observation{}, pcErr("HasValue", err)
			}
			if !ok {
				return pc.mismatch(call, name, pc.cat.Text(prompt.SourceResult, "field", src.Field, "tool", src.Tool)), nil
			}
		}
	case tool.FromStep:
		ref := evidence.StepRef(src.Step)
		source := pc.cat.Text(prompt.SourceStep, "key", src.Field, "step", src.Step)
		has, err := pc.ledger.HasResult(ctx, call.Run, ref)
		if err != nil {
			return observation.Observation{}, pcErr("HasResult", err)
		}
		if !has {
			return observation.Rejected(errcode.ParamProvenanceStepMissing,
				pc.cat.Reason(errcode.ParamProvenanceStepMissing, "tool", call.Tool.Name, "param", name, "source", source),
				pc.cat.Text(prompt.NextStepMissing, "param", name, "tool", call.Tool.Name)), nil
		}
		for _, v := range scalars {
			ok, err := pc.ledger.HasValue(ctx, call.Run, ref, src.Field, v)
			if err != nil {
				return observation.Observation{}, pcErr("HasValue", err)
			}
			if !ok {
				return pc.mismatch(call, name, source), nil
			}
		}
	case tool.FromAny:
	}
	if pc.policy != nil {
		if err := pc.policy(ctx, call, name, raw); err != nil {
			return observation.Rejected(errcode.ParamProvenanceRejected,
				pc.cat.Reason(errcode.ParamProvenanceRejected, "tool", call.Tool.Name, "param", name, "detail", tool.ClipDetail(err.Error())),
				pc.cat.Text(prompt.NextProvenanceRejected, "param", name, "tool", call.Tool.Name)), nil
		}
	}
	return observation.Observation{}, nil
}

func (pc *paramContract) mismatch(call invoker.Call, name, source string) observation.Observation {
	return observation.Rejected(errcode.ParamProvenanceMismatch,
		pc.cat.Reason(errcode.ParamProvenanceMismatch, "tool", call.Tool.Name, "param", name, "source", source),
		pc.cat.Text(prompt.NextProvenance, "param", name, "source", source, "tool", call.Tool.Name))
}

func pcErr(op string, err error) error {
	return fmt.Errorf("guard: param contract: evidence %s: %w", op, err)
}

// member is one top-level member of a JSON object.
type member struct {
	rawKey []byte // the key's bytes between the quotes, when it has no escapes
	key    string // the decoded key, when it has escapes
	value  []byte
}

// keyFold reports whether the member's key equals name without regard to
// case (as encoding/json matches struct fields). It allocates nothing for
// a key without escapes.
func (m *member) keyFold(name string) bool {
	if m.rawKey != nil {
		return equalFoldBytes(m.rawKey, name)
	}
	return strings.EqualFold(m.key, name)
}

// equalFoldBytes is strings.EqualFold of string(b) and s, without
// converting b.
func equalFoldBytes(b []byte, s string) bool {
	for i := 0; i < len(b) && i < len(s); i++ {
		if b[i] >= utf8.RuneSelf || s[i] >= utf8.RuneSelf {
			return strings.EqualFold(string(b), s) // non-ASCII: the general rule
		}
	}
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// objectMembers appends the members of the JSON object args to dst, in
// order, duplicates included. It reports false when args is not one valid
// JSON object. It avoids encoding/json's reflection: this runs on every
// call of a tool with declared parameters.
func objectMembers(args []byte, dst []member) ([]member, bool) {
	if !jsonvalid.Valid(args) {
		return dst, false
	}
	i := skipSpace(args, 0)
	if i >= len(args) || args[i] != '{' {
		return dst, false
	}
	i = skipSpace(args, i+1)
	if args[i] == '}' {
		return dst, true
	}
	for {
		end := skipValue(args, i) // the key, a string
		var m member
		if raw := args[i+1 : end-1]; bytes.IndexByte(raw, '\\') < 0 {
			m.rawKey = raw[:len(raw):len(raw)] // not nil, even for ""
		} else if key, ok := unquote(args[i:end]); ok {
			m.key = key
		} else {
			return dst, false // unreachable: args is valid
		}
		i = skipSpace(args, end)
		i = skipSpace(args, i+1) // past ':'
		end = skipValue(args, i)
		m.value = args[i:end]
		dst = append(dst, m)
		i = skipSpace(args, end)
		if args[i] == '}' {
			return dst, true
		}
		i = skipSpace(args, i+1) // past ','
	}
}

// unquote decodes the JSON string q, escapes and all. It is a function of
// its own so that only keys with escapes pay for a decoded string.
func unquote(q []byte) (string, bool) {
	var s string
	err := json.Unmarshal(q, &s)
	return s, err == nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the valid JSON value at b[i].
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		default:
			if depth == 0 {
				j := i
				for j < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[j])) {
					j++
				}
				return j
			}
		}
	}
	return i
}

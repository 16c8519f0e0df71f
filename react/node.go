package react

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reactguard/reactguard/tool"
)

// Default limits of a [Node] whose limit fields are zero.
const (
	// DefaultNoProgressLimit is the number of consecutive stalls a node
	// tolerates; the next one fails it.
	DefaultNoProgressLimit = 3
	// DefaultMaxRounds bounds the model turns of a node.
	DefaultMaxRounds = 20
	// DefaultMaxParallel bounds the read-only calls of one wave that run at
	// the same time when [Node].ParallelReads is set.
	DefaultMaxParallel = 4
)

// Node is one ReAct task: what the model is asked to do, which tools it may
// see, the outputs it must produce, and the limits of the loop. A Node is a
// plain value; it is copied into every run and into its snapshot, so a
// suspended run resumes with the node it started with. The zero value is a
// valid node with no instructions, no catalog tools (only the built-in
// tools), no outputs and the default limits.
type Node struct {
	// Name identifies the node in events and logs.
	Name string `json:"name,omitempty"`
	// Instructions tell the model the task; they open the system message
	// of every round.
	Instructions string `json:"instructions,omitempty"`
	// Tools are the names of the catalog tools the model may see and call,
	// in the order they are offered. Every name must be in the loop's
	// catalog. The built-in tools are always visible and must not be
	// listed. A call of any other tool is REJECTED CATALOG_DENIED.
	Tools []string `json:"tools,omitempty"`
	// Outputs is the output contract: the keys builtin_output_set may set.
	Outputs []Output `json:"outputs,omitempty"`
	// NoProgressLimit is the number of consecutive stalls tolerated; the
	// stall past it fails the node. 0 means [DefaultNoProgressLimit].
	NoProgressLimit int `json:"no_progress_limit,omitempty"`
	// MaxRounds bounds the model turns of the node, across suspensions; a
	// node that has not ended after MaxRounds turns fails. 0 means
	// [DefaultMaxRounds].
	MaxRounds int `json:"max_rounds,omitempty"`
	// ParallelReads lets the read-only catalog calls of one wave run
	// concurrently. Their results are still processed in call order, so the
	// counting of §6 is unchanged; see the package documentation. It pays
	// off only for tools that wait on I/O: for in-process tools that return
	// in microseconds the goroutines cost more than they save (measured in
	// docs/performance.md, "Loop").
	ParallelReads bool `json:"parallel_reads,omitempty"`
	// MaxParallel bounds the concurrent reads; 0 means
	// [DefaultMaxParallel].
	MaxParallel int `json:"max_parallel,omitempty"`
	// HostApproval makes the host, not the model, ask for approval: when
	// the write gate defers a write call of the node for approval
	// (DEFERRED APPROVAL_REQUIRED), the run suspends at once for that call
	// — the same [SuspendApproval] suspension, with the same
	// [PendingWrite], that builtin_node_approval would give — instead of
	// answering the model with NEXT_APPROVAL and waiting for it to call
	// builtin_node_approval. The suspension's CallID is then the write
	// call itself. On resume, [Approve] grants the call and the loop runs
	// it through the guard chain at once: its tool message is the write's
	// own result, and the rest of the turn goes on as if the approval had
	// been given beforehand. [Decline] answers the write call with
	// RESULT_APPROVAL_DECLINED (a SUCCESS: a legitimate answer; the write
	// did not run) and skips the rest of the turn. For hosts that do not
	// want a run to depend on the model asking; false (the default) is the
	// specification's model-driven flow.
	HostApproval bool `json:"host_approval,omitempty"`
	// Require says, per visible catalog tool, what the node needs of the
	// tool's results beyond its contract (a cache hit may be a successful
	// execution, but it cannot satisfy a user who asks for the latest
	// data; a first page is not the complete data): with
	// tool.RequireLatest a result older than the tool's Contract.MaxAge
	// is insufficient (stale), with tool.RequireComplete a page followed
	// by more is insufficient until the last page was read (see
	// guard.ResponseContract); the model reads why and what to do. A tool
	// named here must be in Tools, and its contract must declare MaxAge
	// (latest) or Paging (complete). Nil requires nothing more.
	Require map[string]tool.Requirement `json:"require,omitempty"`
	// TextAnswers lets a turn of text alone end the run as the answer to
	// the user, for hosts that run a chat: when the model answers without
	// a tool call and with some text, the run finishes (Status Finished,
	// Summary the text, the goal judged as for builtin_node_finish) once
	// every required output is set; before that, the turn counts one
	// stall and the model is told which outputs are missing. A text cut
	// off at the model's output limit ([CutOff] of the turn's finish
	// reason) is not an answer: it counts one stall and the model is told
	// to answer again, shorter. The system
	// prompt says so. Without it (the default), the specification's rule
	// holds: a turn without a tool call is no progress (one stall), and a
	// turn ends with builtin_node_finish.
	TextAnswers bool `json:"text_answers,omitempty"`
}

// Output declares one output key of a node.
type Output struct {
	// Key is the output's name; unique within the node.
	Key string `json:"key"`
	// Description tells the model what the output holds.
	Description string `json:"description,omitempty"`
	// Required outputs must be set before builtin_node_finish is accepted.
	Required bool `json:"required,omitempty"`
	// Accepts lists the source types a value may come from. Empty means
	// [SourceToolResult] and [SourceUser]: a value must be grounded unless
	// the node explicitly accepts [SourceModel].
	Accepts []SourceType `json:"accepts,omitempty"`
	// Field is the field of a tool result a [SourceToolResult] value must
	// be: the dotted path of its key in the result ("balance",
	// "account.balance"; arrays are walked, every element counts), "" for
	// the whole result when Tool is set. With Field (or Tool) set,
	// builtin_output_set accepts a tool_result value only when it equals
	// that field of the referenced result, and only from a result of Tool
	// when Tool is set (OUTPUT_VALUE_MISMATCH otherwise). Without either,
	// the value may be any value the result holds, and the run's goal
	// cannot be [GoalMet] through it: a value copied from the wrong field
	// would pass.
	Field string `json:"field,omitempty"`
	// Tool is the catalog tool whose result a [SourceToolResult] value
	// must come from; "" means any tool.
	Tool string `json:"tool,omitempty"`
	// Schema, when set, is the JSON Schema the value must match: the output
	// is typed. builtin_output_set refuses a value that does not match it
	// (REJECTED OUTPUT_VALUE_INVALID) before it checks the value's source,
	// and the system prompt lists the node's outputs with their types.
	// [OutputsOf] sets it from a struct field's type. Nil accepts any JSON
	// value. A schema that does not resolve makes the node invalid.
	Schema *jsonschema.Schema `json:"schema,omitempty"`
}

// sourced reports whether o declares where a tool_result value must come
// from (Field or Tool), so that its check matches the value against that
// source's value rather than against any value of the result.
func (o Output) sourced() bool { return o.Field != "" || o.Tool != "" }

// accepts reports whether o accepts source type s.
func (o Output) accepts(s SourceType) bool {
	if len(o.Accepts) == 0 {
		return s == SourceToolResult || s == SourceUser
	}
	return slices.Contains(o.Accepts, s)
}

// accepted returns the source types o accepts, in a stable order.
func (o Output) accepted() []SourceType {
	if len(o.Accepts) == 0 {
		return []SourceType{SourceToolResult, SourceUser}
	}
	return o.Accepts
}

// SourceType says where the value of an output comes from. The zero value
// is invalid: builtin_output_set without a source type is rejected with
// OUTPUT_SOURCE_TYPE_MISSING.
type SourceType uint8

// The source types. Their text forms (user, tool_result, model) are what
// the model passes to builtin_output_set.
const (
	// SourceUser: the value appears in the user's words of the run (the
	// task or an answer to a follow-up). No sourceRef.
	SourceUser SourceType = 1
	// SourceToolResult: the value equals a field (or the whole) of a
	// successful tool result; sourceRef is that call's id.
	SourceToolResult SourceType = 2
	// SourceModel: the model's own conclusion; no sourceRef and no check.
	SourceModel SourceType = 3

	minSource = SourceUser
	maxSource = SourceModel
)

// IsValid reports whether s is one of the source types.
func (s SourceType) IsValid() bool { return s >= minSource && s <= maxSource }

// String returns user, tool_result or model, or "source(n)".
func (s SourceType) String() string {
	switch s {
	case SourceUser:
		return "user"
	case SourceToolResult:
		return "tool_result"
	case SourceModel:
		return "model"
	}
	return "source(" + strconv.Itoa(int(s)) + ")"
}

// ParseSourceType returns the source type with the given text form.
func ParseSourceType(name string) (SourceType, error) {
	for s := minSource; s <= maxSource; s++ {
		if s.String() == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("react: unknown source type %q (want user, tool_result or model)", name)
}

// MarshalText implements [encoding.TextMarshaler]; an invalid value is an
// error.
func (s SourceType) MarshalText() ([]byte, error) {
	if !s.IsValid() {
		return nil, fmt.Errorf("react: cannot marshal invalid source type %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler] with
// [ParseSourceType]; on error s is unchanged.
func (s *SourceType) UnmarshalText(b []byte) error {
	v, err := ParseSourceType(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ErrInvalidNode reports a node definition that cannot run; the error
// returned by [Loop.Run] wraps it and says what is wrong.
var ErrInvalidNode = errors.New("react: invalid node")

func (n Node) noProgressLimit() int {
	if n.NoProgressLimit > 0 {
		return n.NoProgressLimit
	}
	return DefaultNoProgressLimit
}

func (n Node) maxRounds() int {
	if n.MaxRounds > 0 {
		return n.MaxRounds
	}
	return DefaultMaxRounds
}

func (n Node) maxParallel() int {
	if n.MaxParallel > 0 {
		return n.MaxParallel
	}
	return DefaultMaxParallel
}

// output returns the declared output with key.
func (n Node) output(key string) (Output, bool) {
	for _, o := range n.Outputs {
		if o.Key == key {
			return o, true
		}
	}
	return Output{}, false
}

// required returns the keys of the required outputs in declaration order.
func (n Node) required() []string {
	var keys []string
	for _, o := range n.Outputs {
		if o.Required {
			keys = append(keys, o.Key)
		}
	}
	return keys
}

// validate checks n against the catalog lookup has.
func (n Node) validate(has func(name string) bool) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidNode, n.Name, fmt.Sprintf(format, args...))
	}
	if n.NoProgressLimit < 0 || n.MaxRounds < 0 || n.MaxParallel < 0 {
		return bad("negative limit")
	}
	tools := newKeySet(len(n.Tools))
	for i, t := range n.Tools {
		switch {
		case isBuiltin(t):
			return bad("built-in tool %s must not be listed in Tools (it is always visible)", t)
		case tools.repeated(i, func(j int) string { return n.Tools[j] }):
			return bad("tool %s listed twice", t)
		case !has(t):
			return bad("tool %s is not in the catalog", t)
		}
	}
	keys := newKeySet(len(n.Outputs))
	for i, o := range n.Outputs {
		if o.Key == "" {
			return bad("an output has no key")
		}
		if keys.repeated(i, func(j int) string { return n.Outputs[j].Key }) {
			return bad("output %s declared twice", o.Key)
		}
		for _, s := range o.Accepts {
			if !s.IsValid() {
				return bad("output %s accepts an invalid source type %d", o.Key, uint8(s))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(n.Require)) {
		switch q := n.Require[name]; {
		case !slices.Contains(n.Tools, name):
			return bad("Require names %s, which is not in Tools", name)
		case !q.IsValid():
			return bad("Require of %s is invalid (%d)", name, uint8(q))
		}
	}
	return nil
}

// checkRequire refuses a requirement the tool's contract cannot serve.
func (n Node) checkRequire(lookup func(string) (*tool.Tool, bool)) error {
	for _, name := range slices.Sorted(maps.Keys(n.Require)) {
		q := n.Require[name]
		t, _ := lookup(name)
		var c *tool.Contract
		if t != nil {
			c = t.Contract
		}
		if q.Has(tool.RequireLatest) && (c == nil || c.MaxAge <= 0) {
			return fmt.Errorf("%w %q: Require of %s is latest, and its contract declares no MaxAge", ErrInvalidNode, n.Name, name)
		}
		if q.Has(tool.RequireComplete) && (c == nil || c.Paging == nil) {
			return fmt.Errorf("%w %q: Require of %s is complete, and its contract declares no Paging", ErrInvalidNode, n.Name, name)
		}
	}
	return nil
}

// keySet finds the names a node lists twice. Nodes list a few tools and
// outputs: up to smallSet names it compares each with the earlier ones,
// which allocates nothing and beats a map at that size; past it, it keeps
// a map.
type keySet struct{ big map[string]struct{} }

const smallSet = 32

func newKeySet(n int) keySet {
	if n > smallSet {
		return keySet{big: make(map[string]struct{}, n)}
	}
	return keySet{}
}

// repeated reports whether key(i) equals key(j) for some j < i. It is
// called for i = 0, 1, … in order.
func (s keySet) repeated(i int, key func(j int) string) bool {
	k := key(i)
	if s.big != nil {
		if _, ok := s.big[k]; ok {
			return true
		}
		s.big[k] = struct{}{}
		return false
	}
	for j := range i {
		if key(j) == k {
			return true
		}
	}
	return false
}

package reacttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/reactguard/reactguard/react"
)

// ErrScriptExhausted is wrapped by the error a [Model] returns when it is
// asked for a turn its script does not have. The error names the turn and
// the last message the model received.
var ErrScriptExhausted = errors.New("reacttest: script exhausted")

// Step computes one model turn from the request the model received. A
// non-nil error is returned by [Model.Generate] as is, to simulate a model
// that could not answer (rate limit, 5xx, malformed body).
type Step func(req react.Request) (react.Response, error)

// Reply returns a [Step] that answers r whatever the request.
func Reply(r react.Response) Step {
	return func(react.Request) (react.Response, error) { return r, nil }
}

// Model is a scripted [react.Model]. Build it with [Script], [Steps] or
// [Func]; the zero value is a model with an empty script, whose first turn
// fails with [ErrScriptExhausted]. A Model is safe for concurrent use; its
// turns are consumed in the order the requests arrive. It records a deep
// copy of every request, so a turn costs time and memory in proportion to
// the history: for benchmarks or nodes of thousands of rounds, use a
// [react.ModelFunc] instead.
type Model struct {
	mu       sync.Mutex
	steps    []Step
	each     Step // non-nil: computes every turn, never exhausted
	requests []react.Request
}

var _ react.Model = (*Model)(nil)

// Script returns a model that replays turns in order, one per request, and
// fails with [ErrScriptExhausted] after the last one.
func Script(turns ...react.Response) *Model {
	steps := make([]Step, len(turns))
	for i, t := range turns {
		steps[i] = Reply(t)
	}
	return &Model{steps: steps}
}

// Steps returns a model that runs steps in order, one per request, and
// fails with [ErrScriptExhausted] after the last one. Mix fixed turns
// ([Reply]) with computed ones. A nil step panics when its turn comes.
func Steps(steps ...Step) *Model {
	return &Model{steps: slices.Clone(steps)}
}

// Func returns a model whose every turn is computed by f from the request
// so far; it is never exhausted. Stop the run from f (finish or fail the
// node) or bound it with the node's round limit. f must not be nil.
func Func(f func(req react.Request) react.Response) *Model {
	if f == nil {
		panic("reacttest.Func: nil function")
	}
	return &Model{each: func(req react.Request) (react.Response, error) { return f(req), nil }}
}

// Generate implements [react.Model]: it records a deep copy of req and
// returns the next turn. A done ctx returns ctx.Err() without consuming a
// turn or recording the request. The returned response is a fresh copy the
// caller may keep.
func (m *Model) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	if err := ctx.Err(); err != nil {
		return react.Response{}, err
	}
	m.mu.Lock()
	turn := len(m.requests) + 1
	m.requests = append(m.requests, cloneRequest(req))
	step := m.each
	if step == nil && turn <= len(m.steps) {
		step = m.steps[turn-1]
	}
	total := len(m.steps)
	m.mu.Unlock()
	if step == nil {
		return react.Response{}, fmt.Errorf("%w: turn %d requested, the script has %d turn(s); last message: %s",
			ErrScriptExhausted, turn, total, describeLast(req))
	}
	resp, err := step(req)
	if err != nil {
		return react.Response{}, err
	}
	return cloneResponse(resp), nil
}

// Requests returns copies of the requests received so far, in order; the
// caller owns the slice.
func (m *Model) Requests() []react.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

// Turns returns the number of turns requested so far (including one that
// failed with [ErrScriptExhausted]).
func (m *Model) Turns() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// Remaining returns the number of scripted turns not yet served, or -1 for
// a model built with [Func].
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.each != nil {
		return -1
	}
	return max(len(m.steps)-len(m.requests), 0)
}

// Call returns a tool call with the given id, tool name and raw arguments.
// args is used verbatim, so a test can send invalid JSON on purpose; ""
// means no arguments.
func Call(id, name, args string) react.ToolCall {
	tc := react.ToolCall{ID: id, Name: name}
	if args != "" {
		tc.Args = json.RawMessage(args)
	}
	return tc
}

// Calls returns a turn made of the given tool calls, in order.
func Calls(calls ...react.ToolCall) react.Response {
	return react.Response{ToolCalls: slices.Clone(calls)}
}

// Text returns a turn with text and no tool call.
func Text(text string) react.Response { return react.Response{Text: text} }

// Turn returns a turn with both text and tool calls.
func Turn(text string, calls ...react.ToolCall) react.Response {
	return react.Response{Text: text, ToolCalls: slices.Clone(calls)}
}

// LastToolMessages returns the tool messages of req that follow its last
// assistant message: the results of the model's previous turn, in order.
// It returns nil when the request holds no assistant message yet.
func LastToolMessages(req react.Request) []react.Message {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == react.RoleAssistant {
			var out []react.Message
			for _, msg := range req.Messages[i+1:] {
				if msg.Role == react.RoleTool {
					out = append(out, msg)
				}
			}
			return out
		}
	}
	return nil
}

// ToolMessage returns the latest tool message of req answering callID.
func ToolMessage(req react.Request, callID string) (react.Message, bool) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if msg := req.Messages[i]; msg.Role == react.RoleTool && msg.ToolCallID == callID {
			return msg, true
		}
	}
	return react.Message{}, false
}

// SystemText returns the contents of the system messages of req joined by
// newlines: the instructions, rules and phase hint the model was shown.
func SystemText(req react.Request) string {
	var parts []string
	for _, msg := range req.Messages {
		if msg.Role == react.RoleSystem {
			parts = append(parts, msg.Content)
		}
	}
	return strings.Join(parts, "\n")
}

func cloneRequest(req react.Request) react.Request {
	msgs := make([]react.Message, len(req.Messages))
	for i, msg := range req.Messages {
		msg.ToolCalls = cloneCalls(msg.ToolCalls)
		msgs[i] = msg
	}
	return react.Request{Messages: msgs, Tools: slices.Clone(req.Tools)}
}

func cloneResponse(r react.Response) react.Response {
	r.ToolCalls = cloneCalls(r.ToolCalls)
	return r
}

func cloneCalls(calls []react.ToolCall) []react.ToolCall {
	if calls == nil {
		return nil
	}
	out := make([]react.ToolCall, len(calls))
	for i, c := range calls {
		c.Args = slices.Clone(c.Args)
		out[i] = c
	}
	return out
}

// describeLast summarises the last message of req for error texts.
func describeLast(req react.Request) string {
	if len(req.Messages) == 0 {
		return "(none)"
	}
	msg := req.Messages[len(req.Messages)-1]
	s := string(msg.Role)
	if msg.ToolName != "" {
		s += " " + msg.ToolName
	}
	content := msg.Content
	if r := []rune(content); len(r) > 200 {
		content = string(r[:200]) + "…"
	}
	return s + ": " + content
}

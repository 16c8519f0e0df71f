package invoker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/observation"
	"github.com/reactguard/reactguard/outcome"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// Options configures the default invoker built by [New]. The zero value (and
// a nil *Options) means defaults; every field is optional. New copies the
// options, so changing them afterwards has no effect.
type Options struct {
	// Catalog is the language of the reason and next-step texts; nil means
	// English.
	Catalog *prompt.Catalog
	// ToolErrors is the next-step table; nil means the defaults of
	// [DefaultNext]. It is read concurrently and must not be changed after
	// New.
	ToolErrors *ToolErrors
	// DefaultTimeout bounds one execution of a tool whose Timeout is 0; 0
	// means no bound beyond the caller's context.
	DefaultTimeout time.Duration
	// Logger receives panic stacks (ERROR) and classification details
	// (DEBUG: the raw error behind each non-success). Nothing logged here
	// reaches the model. Nil means [slog.Default], looked up at log time.
	Logger *slog.Logger
}

type defaultInvoker struct {
	cat     *prompt.Catalog
	errs    *ToolErrors
	timeout time.Duration
	logger  *slog.Logger

	// succeeded holds the rendered RESULT_TOOL_SUCCEEDED of each tool name
	// (at most maxSucceeded names), so a success costs no template fill.
	succeeded     sync.Map // string → *succeededMsg
	succeededSize atomic.Int32
	// lastSucceeded is the last success message looked up: a run calls
	// the same tool, or a few, over and over.
	lastSucceeded atomic.Pointer[succeededMsg]
}

// succeededMsg is the success message of one tool name.
type succeededMsg struct{ name, text string }

// maxSucceeded bounds the tool names whose success message is kept.
const maxSucceeded = 1024

// success returns the success message of tool name.
func (inv *defaultInvoker) success(name string) string {
	if last := inv.lastSucceeded.Load(); last != nil && last.name == name {
		return last.text
	}
	if m, ok := inv.succeeded.Load(name); ok {
		msg := m.(*succeededMsg)
		inv.lastSucceeded.Store(msg)
		return msg.text
	}
	msg := &succeededMsg{name: name, text: inv.cat.Text(prompt.ResultToolSucceeded, "tool", name)}
	if inv.succeededSize.Load() < maxSucceeded {
		if _, loaded := inv.succeeded.LoadOrStore(name, msg); !loaded {
			inv.succeededSize.Add(1)
		}
	}
	return msg.text
}

// New returns the default invoker: the innermost [Handler] of a chain, which
// runs call.Tool.Func and classifies what it returned into an observation
// (see the package documentation for the classification table and its
// order). It returns an error only when ctx itself is done, and then the
// observation is the zero value. The handler is safe for concurrent use; it
// runs the tool on the calling goroutine and starts none of its own.
func New(opts *Options) Handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	inv := &defaultInvoker{
		cat:     o.Catalog,
		errs:    o.ToolErrors,
		timeout: o.DefaultTimeout,
		logger:  o.Logger,
	}
	if inv.cat == nil {
		inv.cat = prompt.Default()
	}
	return inv.invoke
}

func (inv *defaultInvoker) log() *slog.Logger {
	if inv.logger != nil {
		return inv.logger
	}
	return slog.Default()
}

// panicked records a recovered panic.
type panicked struct {
	value any
	stack []byte
}

func (inv *defaultInvoker) invoke(ctx context.Context, call Call) (observation.Observation, error) {
	t := call.Tool
	if t == nil {
		inv.log().LogAttrs(ctx, slog.LevelDebug, "invoker: no tool definition",
			slog.String("tool", call.Name), slog.String("call_id", call.ID))
		return observation.Rejected(errcode.CatalogDenied,
			inv.cat.Reason(errcode.CatalogDenied, "tool", call.Name),
			inv.next(call.Name, errcode.CatalogDenied)), nil
	}
	name := t.Name
	if name == "" {
		name = call.Name
	}
	if err := ctx.Err(); err != nil {
		return observation.Observation{}, err
	}
	if t.Func == nil {
		inv.log().LogAttrs(ctx, slog.LevelError, "invoker: tool has no Func",
			slog.String("tool", name), slog.String("call_id", call.ID))
		return inv.failed(name, errcode.ToolError, inv.cat.Text(prompt.ReasonToolPanicked, "tool", name)), nil
	}

	runCtx := ctx
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = inv.timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req := tool.Request{
		Run:            call.Run,
		CallID:         call.ID,
		Args:           call.Args,
		Attempt:        max(call.Attempt, 1),
		IdempotencyKey: call.IdempotencyKey,
		FencingToken:   call.FencingToken,
	}
	result, p, err := run(runCtx, t.Func, req)
	if p != nil {
		inv.log().LogAttrs(ctx, slog.LevelError, "invoker: tool panicked",
			slog.String("tool", name), slog.String("call_id", call.ID),
			slog.Any("panic", p.value), slog.String("stack", string(p.stack)))
		return inv.failed(name, errcode.ToolError, inv.cat.Text(prompt.ReasonToolPanicked, "tool", name)).
			WithCause(fmt.Errorf("invoker: tool %s panicked: %v", name, p.value)), nil
	}
	if err == nil {
		return observation.Success(inv.success(name), result), nil
	}

	v, p := classifySafely(err, ctx.Err(), runCtx.Err())
	if p != nil {
		// The error value itself is broken (a typed nil whose methods panic).
		inv.log().LogAttrs(ctx, slog.LevelError, "invoker: tool error panicked while classified",
			slog.String("tool", name), slog.String("call_id", call.ID),
			slog.Any("panic", p.value), slog.String("stack", string(p.stack)))
		return inv.failed(name, errcode.ToolError, inv.cat.Text(prompt.ReasonToolPanicked, "tool", name)).
			WithCause(fmt.Errorf("invoker: tool %s: its error panicked while classified: %v", name, p.value)), nil
	}
	if v.cancelled != nil {
		return observation.Observation{}, v.cancelled
	}
	if v.detail == "" {
		// The error carries nothing written for the model: say only what
		// the runtime itself knows.
		v.detail = inv.cat.Text(prompt.DetailWithheld)
		if v.code == errcode.ToolTimeout && timeout > 0 && runCtx.Err() != nil {
			v.detail = inv.cat.Text(prompt.DetailDeadline, "timeout", timeout.String())
		}
	}
	if lg := inv.log(); lg.Enabled(ctx, slog.LevelDebug) {
		lg.LogAttrs(ctx, slog.LevelDebug, "invoker: tool call classified",
			slog.String("tool", name), slog.String("call_id", call.ID),
			slog.String("outcome", v.outcome.String()), slog.String("code", v.code.String()),
			slog.String("error", v.text))
	}
	if v.outcome == outcome.Rejected {
		if r := v.rejection; r != nil {
			reason := r.Reason()
			if reason == "" {
				reason = inv.cat.Reason(r.Code(), "tool", name)
			}
			return observation.Rejected(r.Code(), reason, r.Next()).WithCause(err), nil
		}
		return observation.Rejected(v.code, inv.cat.Reason(v.code, "tool", name, "detail", v.detail), inv.next(name, v.code)).WithCause(err), nil
	}
	return inv.failed(name, v.code, inv.reason(name, v)).WithCause(err), nil
}

// reason renders the reason text of a FAILED verdict.
func (inv *defaultInvoker) reason(name string, v verdict) string {
	if v.code == errcode.ToolBusinessFailed {
		if v.downstream == "" {
			return inv.cat.Text(prompt.ReasonBusinessFailed, "tool", name, "detail", v.detail)
		}
		return inv.cat.Reason(errcode.ToolBusinessFailed, "tool", name, "code", v.downstream, "detail", v.detail)
	}
	return inv.cat.Reason(v.code, "tool", name, "detail", v.detail)
}

func (inv *defaultInvoker) failed(name string, code errcode.Code, reason string) observation.Observation {
	return observation.Failed(code, reason, inv.next(name, code))
}

// next renders the next step of code for the tool; it is never empty.
func (inv *defaultInvoker) next(name string, code errcode.Code) string {
	if s := inv.errs.Next(inv.cat, name, code); s != "" {
		return s
	}
	return inv.cat.Text(prompt.NextToolError, "tool", name)
}

// run calls fn, turning a panic into a *panicked.
func run(ctx context.Context, fn tool.Func, req tool.Request) (result any, p *panicked, err error) {
	defer func() {
		if r := recover(); r != nil {
			p = &panicked{value: r, stack: debug.Stack()}
		}
	}()
	result, err = fn(ctx, req)
	return result, nil, err
}

// classifySafely runs classify, turning a panic of the error's own methods
// (Error, Unwrap, Is, As on a typed nil, say) into a *panicked.
func classifySafely(err, callerErr, runErr error) (v verdict, p *panicked) {
	defer func() {
		if r := recover(); r != nil {
			p = &panicked{value: r, stack: debug.Stack()}
		}
	}()
	return classify(err, callerErr, runErr), nil
}

// verdict is what classify decided about a tool error.
type verdict struct {
	outcome    outcome.Outcome // Rejected or Failed; unset when cancelled != nil
	code       errcode.Code
	detail     string          // {detail} of the reason: only what the tool wrote for the model; "" when withheld
	downstream string          // the downstream code of a business failure
	rejection  *tool.Rejection // a tool's own rejection, used verbatim
	cancelled  error           // the caller's ctx error: not an outcome
	text       string          // err.Error(), for the log
}

// classify is the one place where a tool's error becomes a verdict. callerErr
// is the caller's ctx.Err() and runErr the ctx.Err() of the context the tool
// ran under (the caller's, or a per-tool timeout derived from it). The rows
// are tried in the order documented in doc.go; each walks the whole error
// chain, wrapped and joined errors included.
//
// The detail of a verdict is never the error's text: only what a tool
// wrote for the model ([tool.DetailOf]: a tool.Error's Message or a
// tool.WithDetail detail), or for arguments that did not decode the
// JSON-only description of [tool.ArgsError.Detail]; "" otherwise.
func classify(err, callerErr, runErr error) verdict {
	text := err.Error()
	safe, _ := tool.DetailOf(err)
	fail := func(code errcode.Code) verdict {
		return verdict{outcome: outcome.Failed, code: code, detail: safe, text: text}
	}
	// 1. A built-in tool's rejection carries its own code and next step. A
	// Rejection built without Reject (no code or next) is a tool bug.
	var rej *tool.Rejection
	if errors.As(err, &rej) {
		if rej.Code().IsValid() && rej.Next() != "" {
			return verdict{outcome: outcome.Rejected, code: rej.Code(), rejection: rej, text: text}
		}
		return fail(errcode.ToolError)
	}
	// 2. Arguments a typed tool could not decode.
	var args *tool.ArgsError
	if errors.As(err, &args) {
		return verdict{outcome: outcome.Rejected, code: errcode.ArgJSONInvalid, detail: args.Detail(), text: text}
	}
	// 3. Cancellation belongs to the host; timeouts while it waits are the
	// tool's.
	if callerErr != nil {
		return verdict{cancelled: callerErr, text: text}
	}
	if runErr != nil || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return fail(errcode.ToolTimeout)
	}
	// 4. The tool's (or adapter's) own classification.
	if te, ok := tool.AsError(err); ok {
		v := fail(te.Kind.Code())
		if v.code == errcode.ToolBusinessFailed {
			v.downstream = tool.ClipDetail(te.Downstream)
		}
		return v
	}
	// 5. Transport: the other side cannot be reached or dropped us.
	if isTransport(err) {
		return fail(errcode.ToolUnreachable)
	}
	// 6. Other I/O.
	if isIO(err) {
		return fail(errcode.ToolIOError)
	}
	// 7. Anything else.
	return fail(errcode.ToolError)
}

// walk reports whether f holds for any error in err's tree, depth first,
// following Unwrap() error and Unwrap() []error.
func walk(err error, f func(error) bool) bool {
	for err != nil {
		if f(err) {
			return true
		}
		switch u := err.(type) { //nolint:errorlint // walk is the chain walker: it unwraps by hand
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if walk(e, f) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}

// isTimeout reports whether any error in the tree is a net.Error (or any
// error with a Timeout method, such as os.ErrDeadlineExceeded) reporting a
// timeout.
func isTimeout(err error) bool {
	return walk(err, func(e error) bool {
		t, ok := e.(interface{ Timeout() bool })
		return ok && t.Timeout()
	})
}

var transportErrs = []error{
	io.EOF, io.ErrUnexpectedEOF, net.ErrClosed,
	syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
	syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN, syscall.EHOSTDOWN,
}

// isTransport reports whether the tree holds a connection-level failure:
// refused, reset, aborted, broken pipe, unreachable host or network, EOF, a
// closed connection, a *net.OpError or a *net.DNSError (a *url.Error counts
// through what it wraps).
func isTransport(err error) bool {
	for _, target := range transportErrs {
		if errors.Is(err, target) {
			return true
		}
	}
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &op) || errors.As(err, &dns)
}

var ioErrs = []error{
	io.ErrShortWrite, io.ErrShortBuffer, io.ErrNoProgress, io.ErrClosedPipe, fs.ErrClosed,
}

// isIO reports whether the tree holds an I/O failure: *fs.PathError,
// *os.LinkError, *os.SyscallError, any syscall.Errno, or one of the io and
// fs sentinel errors.
func isIO(err error) bool {
	for _, target := range ioErrs {
		if errors.Is(err, target) {
			return true
		}
	}
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	var errno syscall.Errno
	return errors.As(err, &pe) || errors.As(err, &le) || errors.As(err, &se) || errors.As(err, &errno)
}

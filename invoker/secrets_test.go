package invoker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/internal/secrettest"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// The secrets a careless tool error carries (none may reach the model),
// and the substrings that must never be in a model-facing text.
const (
	secretDSN   = secrettest.DSN
	secretToken = secrettest.Token
	secretPath  = secrettest.Path
	secretStack = secrettest.Stack
)

var (
	secretHuge = secrettest.Huge
	leaks      = secrettest.Leaks("*url.Error")
)

// secretErrors are errors that carry the secrets, one per classification
// row of the default invoker, with the code each must get.
func secretErrors() []struct {
	name string
	err  error
	code errcode.Code
	logs string // a secret the log must still have
} {
	dsn := errors.New("pq: password authentication failed for " + secretDSN)
	return []struct {
		name string
		err  error
		code errcode.Code
		logs string
	}{
		{"DSN in a plain error", dsn, errcode.ToolError, "hunter2"},
		{"DSN in a wrapped error", fmt.Errorf("query orders: %w", dsn), errcode.ToolError, "hunter2"},
		{"token URL in a timeout", &url.Error{Op: "Get", URL: "https://api.example.com/v1/orders?" + secretToken, Err: context.DeadlineExceeded}, errcode.ToolTimeout, "tok_5ecr3t"},
		{"DSN in a refused connection", fmt.Errorf("connect %s: %w", secretDSN, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), errcode.ToolUnreachable, "hunter2"},
		{"path in an I/O error", &fs.PathError{Op: "open", Path: secretPath, Err: fs.ErrPermission}, errcode.ToolIOError, "/srv/app/keys"},
		{"stack in an error", errors.New("panic: boom\n" + secretStack), errcode.ToolError, "goroutine 7"},
		{"10 KB error", errors.New(secretHuge), errcode.ToolError, secretHuge},
		{"DSN in a typed error's cause", tool.Unreachable(dsn), errcode.ToolUnreachable, "hunter2"},
		{"token in a classified error's cause", tool.Classified(tool.KindMCPRPC, "", errors.New("GET /x?"+secretToken)), errcode.MCPRPCError, "tok_5ecr3t"},
		{"path in a not-found's cause", &tool.Error{Kind: tool.KindNotFound, Err: &fs.PathError{Op: "stat", Path: secretPath, Err: fs.ErrNotExist}}, errcode.ToolNotFound, "/srv/app/keys"},
	}
}

// TestSecretsNeverReachTheModel feeds each secret-carrying error through the
// default invoker: the reason and the next step hold none of it, the
// observation's cause holds all of it, and the log has it.
func TestSecretsNeverReachTheModel(t *testing.T) {
	for _, lang := range []prompt.Lang{prompt.English, prompt.Chinese} {
		for _, tc := range secretErrors() {
			t.Run(lang.String()+"/"+tc.name, func(t *testing.T) {
				var logs bytes.Buffer
				inv := invoker.New(&invoker.Options{
					Catalog: prompt.For(lang),
					Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				})
				obs, err := inv(context.Background(), call(failing("orders", tc.err)))
				require.NoError(t, err)
				assert.Equalf(t, tc.code, obs.Code(), "invoke(%s) code = %v; want %v", tc.name, obs.Code(), tc.code)
				text := obs.MessageIn(prompt.For(lang))
				for _, leak := range leaks {
					assert.NotContainsf(t, text, leak, "invoke(%s) message = %q leaks %q", tc.name, text, leak)
				}
				assert.Containsf(t, text, prompt.For(lang).Text(prompt.DetailWithheld), "invoke(%s) message = %q; want the withheld detail", tc.name, text)
				assert.Samef(t, tc.err, obs.Cause(), "invoke(%s) cause = %v; want the tool's error, for the log", tc.name, obs.Cause())
				assert.Containsf(t, logs.String(), tc.logs, "invoke(%s) log lacks %q", tc.name, tc.logs)
			})
		}
	}
}

// TestSafeDetailsReachTheModel: what a tool marks as written for the model
// (tool.WithDetail, a tool.Error's Message) is the detail, clipped to
// tool.MaxDetail bytes and to its first line; the classification still
// follows the error chain.
func TestSafeDetailsReachTheModel(t *testing.T) {
	dsn := errors.New("dial " + secretDSN)
	refusedDSN := fmt.Errorf("connect %s: %w", secretDSN, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	tests := []struct {
		name   string
		err    error
		code   errcode.Code
		detail string
		reason string
	}{
		{"WithDetail", tool.WithDetail(dsn, "the orders database is down"), errcode.ToolError, "the orders database is down", "a plain error with a safe detail"},
		{"WithDetail keeps the classification", tool.WithDetail(refusedDSN, "the orders database refused the connection"), errcode.ToolUnreachable, "the orders database refused the connection", "the chain below the detail still decides the code"},
		{"WithDetail wrapped", fmt.Errorf("handler: %w", tool.WithDetail(dsn, "the orders database is down")), errcode.ToolError, "the orders database is down", "found anywhere in the chain"},
		{"Message", tool.Classified(tool.KindUnavailable, "maintenance until 14:00", dsn), errcode.ToolUnavailable, "maintenance until 14:00", "a typed error's message"},
		{"first line only", tool.WithDetail(dsn, "the orders database is down\n"+secretStack), errcode.ToolError, "the orders database is down", "a multi-line detail keeps its first line"},
		{"clipped", tool.WithDetail(nil, strings.Repeat("é", 400)), errcode.ToolError, strings.Repeat("é", tool.MaxDetail/2) + "…", "a long detail is clipped at a rune boundary"},
		{"empty detail", tool.WithDetail(dsn, "  "), errcode.ToolError, en.Text(prompt.DetailWithheld), "an empty detail is no detail"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obs, err := invoker.New(&invoker.Options{Logger: slog.New(slog.DiscardHandler)})(context.Background(), call(failing("orders", tc.err)))
			require.NoError(t, err)
			assert.Equalf(t, tc.code, obs.Code(), "code = %v; want %v (%s)", obs.Code(), tc.code, tc.reason)
			want := en.Reason(tc.code, "tool", "orders", "detail", tc.detail)
			assert.Equalf(t, want, obs.Reason(), "reason = %q; want %q (%s)", obs.Reason(), want, tc.reason)
			assert.NotContainsf(t, obs.Reason(), "hunter2", "reason = %q leaks the cause (%s)", obs.Reason(), tc.reason)
		})
	}
}

// TestTimeoutDetail: when the tool's own time limit passed, the model is
// told the limit (a fact the runtime knows), not the error text.
func TestTimeoutDetail(t *testing.T) {
	obs, err := invoker.New(nil)(context.Background(), call(blocking("slow", 5*time.Millisecond)))
	require.NoError(t, err)
	want := en.Reason(errcode.ToolTimeout, "tool", "slow", "detail", en.Text(prompt.DetailDeadline, "timeout", "5ms"))
	assert.Equalf(t, want, obs.Reason(), "reason = %q; want %q", obs.Reason(), want)
}

package chattest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/examples/sitebuilder/story"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// toyModel speaks a toy chat API: it POSTs {"model","messages","tools"}
// (react's own JSON) to /v1/turn and decodes a react.Response, so the
// scenarios can run without an SDK.
type toyModel struct {
	url    string
	client *http.Client
}

func (m toyModel) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	bad := func(format string, args ...any) (react.Response, error) {
		return react.Response{}, &modelerr.Error{Provider: "toy", Kind: modelerr.Request, Err: fmt.Errorf(format, args...)}
	}
	for _, t := range req.Tools {
		if !json.Valid(t.InputSchema) || !bytes.HasPrefix(bytes.TrimSpace(t.InputSchema), []byte("{")) {
			return bad("tool %s: schema is not an object", t.Name)
		}
	}
	for _, msg := range req.Messages {
		switch {
		case msg.Role != react.RoleSystem && msg.Role != react.RoleUser && msg.Role != react.RoleAssistant && msg.Role != react.RoleTool:
			return bad("unknown role %q", msg.Role)
		case msg.Role == react.RoleTool && msg.ToolCallID == "":
			return bad("tool result without call id")
		}
	}
	body, err := json.Marshal(map[string]any{"model": "toy-1", "messages": req.Messages, "tools": req.Tools})
	if err != nil {
		return bad("%v", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url+"/v1/turn", bytes.NewReader(body))
	if err != nil {
		return bad("%v", err)
	}
	resp, err := m.client.Do(hreq)
	if err != nil {
		return react.Response{}, modelerr.Classify("toy", err, nil, "")
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode >= 300 {
		err = errors.New(resp.Status)
	}
	var out react.Response
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return react.Response{}, modelerr.Classify("toy", err, resp, "")
	}
	return out, nil
}

// toyValid: every tool result answers a call of an earlier assistant
// message, and no call id is used twice.
func toyValid(req map[string]any) error {
	var msgs []react.Message
	if err := remarshal(req["messages"], &msgs); err != nil {
		return err
	}
	calls, answered := map[string]bool{}, map[string]bool{}
	for i, m := range msgs {
		for _, c := range m.ToolCalls {
			if calls[c.ID] {
				return fmt.Errorf("message %d: call id %s used twice", i, c.ID)
			}
			calls[c.ID] = true
		}
		if m.Role == react.RoleTool && (!calls[m.ToolCallID] || answered[m.ToolCallID]) {
			return fmt.Errorf("message %d: result %s answers no open call", i, m.ToolCallID)
		}
		answered[m.ToolCallID] = true
	}
	return nil
}

func remarshal(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

var toy = chattest.Adapter{
	Provider:  "toy",
	Endpoint:  chattest.Endpoint{Path: "/v1/turn", Exhausted: `{"error":"no canned reply left"}`},
	ModelName: "toy-1",
	NewModel: func(t testing.TB, serverURL string) react.Model {
		return toyModel{url: serverURL, client: chattest.HTTPClient(t)}
	},
	Valid: toyValid,
	ToolNames: func(req map[string]any) []string {
		var tools []react.ToolSpec
		_ = remarshal(req["tools"], &tools)
		var out []string
		for _, t := range tools {
			out = append(out, t.Name)
		}
		sort.Strings(out)
		return out
	},
	ToolResult: func(req map[string]any, callID string) (string, bool) {
		var msgs []react.Message
		_ = remarshal(req["messages"], &msgs)
		for _, m := range msgs {
			if m.Role == react.RoleTool && m.ToolCallID == callID {
				return m.Content, true
			}
		}
		return "", false
	},
}

var hello = react.Request{Messages: []react.Message{{Role: react.RoleUser, Content: "go"}}}

func TestServerReplaysInOrderAndRecords(t *testing.T) {
	s := chattest.NewServer(t, chattest.Endpoint{Path: "/p"},
		chattest.Reply{Status: 429, Header: map[string]string{"Retry-After": "3"}, Body: `{"n":1}`},
		chattest.Reply{File: "loop_1_read.json", ContentType: "text/plain"},
	)
	client := chattest.HTTPClient(t)
	tests := []struct {
		body, status, ctype, header, want string
		reason                            string
	}{
		{`{"a":1}`, "429 Too Many Requests", "application/json", "3", `{"n":1}`, "status, header and inline body of the first reply"},
		{`{"a":2}`, "200 OK", "text/plain", "", "list_spaces", "the second reply's file from testdata, its content type, status 200 by default"},
	}
	for _, tt := range tests {
		resp, err := client.Post(s.URL+"/p", "application/json", strings.NewReader(tt.body))
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, tt.status, resp.Status, "POST %s: %s", tt.body, tt.reason)
		assert.Equal(t, tt.ctype, resp.Header.Get("Content-Type"), tt.reason)
		assert.Equal(t, tt.header, resp.Header.Get("Retry-After"), tt.reason)
		assert.Contains(t, string(b), tt.want, tt.reason)
	}
	assert.Equal(t, []map[string]any{{"a": 1.0}, {"a": 2.0}}, s.Requests())
	assert.JSONEq(t, `2`, s.Field(1, "a"))
	assert.JSONEq(t, `null`, s.Field(0, "missing"), "an absent field is null")
}

func TestStopEndsAHeldRequest(t *testing.T) {
	tests := []struct {
		stop   chattest.Stop
		want   error
		reason string
	}{
		{chattest.StopDeadline, context.DeadlineExceeded, "the manual deadline fires once the request arrived"},
		{chattest.StopCancel, context.Canceled, "the context is canceled once the request arrived"},
	}
	for _, tt := range tests {
		t.Run(tt.stop.String(), func(t *testing.T) {
			s := chattest.NewServer(t, chattest.Endpoint{}, chattest.Reply{Hang: true})
			ctx := tt.stop.Context(s)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader(`{}`))
			require.NoError(t, err)
			resp, err := chattest.HTTPClient(t).Do(req)
			if resp != nil {
				_ = resp.Body.Close()
			}
			assert.ErrorIs(t, err, tt.want, "Do() with %s = %v; want %v: %s", tt.stop, err, tt.want, tt.reason)
			assert.ErrorIs(t, ctx.Err(), tt.want)
		})
	}
	assert.Equal(t, context.Background(), chattest.StopNever.Context(nil), "StopNever needs no server")
	assert.Equal(t, "Stop(7)", chattest.Stop(7).String())
}

func TestManualDeadline(t *testing.T) {
	ctx := chattest.NewManualDeadline()
	_, ok := ctx.Deadline()
	assert.False(t, ok, "Deadline() reports no time")
	assert.NoError(t, ctx.Err(), "Err() before Expire")
	ctx.Expire()
	ctx.Expire()
	<-ctx.Done()
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded, "Err() after Expire")
}

func TestClosedURLRefuses(t *testing.T) {
	resp, err := chattest.HTTPClient(t).Get(chattest.ClosedURL(t))
	if resp != nil {
		_ = resp.Body.Close()
	}
	require.Error(t, err)
	assert.Equal(t, modelerr.Unreachable, modelerr.KindOf(err), "Get(ClosedURL) = %v; want a refused connection", err)
}

func TestApprovalLoop(t *testing.T) {
	s := toy.RunApprovalLoop(t, "run-toy", chattest.LoopCalls{Read: "r1", Write: "w1", Approval: "a1", Rewrite: "w2"})
	assert.Len(t, s.Requests(), 5)
}

func TestModelErrorLoop(t *testing.T) {
	toy.RunModelErrorLoop(t, chattest.Reply{Status: 429, Body: `{"error":"slow down"}`, Header: map[string]string{"Retry-After": "2"}})
}

func TestErrorCases(t *testing.T) {
	toy.RunErrorCases(t, hello, []chattest.ErrorCase{
		{"rate limited", chattest.Reply{Status: 429, Header: map[string]string{"Retry-After": "20"}}, chattest.StopNever,
			modelerr.Error{Kind: modelerr.RateLimited, StatusCode: 429, RetryAfter: 20 * time.Second}, "status and header reach modelerr"},
		{"not JSON", chattest.Reply{Body: "<html>", ContentType: "text/html"}, chattest.StopNever,
			modelerr.Error{Kind: modelerr.Malformed, StatusCode: 200}, "a 2xx body that does not decode"},
		{"deadline", chattest.Reply{Hang: true}, chattest.StopDeadline, modelerr.Error{Kind: modelerr.Timeout}, "a held request"},
		{"canceled", chattest.Reply{Hang: true}, chattest.StopCancel, modelerr.Error{Kind: modelerr.Canceled}, "a held request"},
	})
}

func TestNoResponseCases(t *testing.T) {
	toy.RunNoResponseCases(t, hello, chattest.NoResponseCase{
		Name: "extra case", Model: toyModel{url: "http://[::1", client: chattest.HTTPClient(t)}, Req: hello,
		Kind: modelerr.Request, Reason: "an unparsable URL",
	})
}

func TestConcurrent(t *testing.T) {
	toy.RunConcurrent(t, 4, chattest.Reply{File: "loop_1_read.json"}, hello)
}

// TestStoryOutput: the lines StoryOutput promises are what the story
// prints when a model plays StoryTurns.
func TestStoryOutput(t *testing.T) {
	var turns []react.Response
	for _, turn := range chattest.StoryTurns() {
		var calls []react.ToolCall
		for _, c := range turn.Calls {
			calls = append(calls, reacttest.Call(c.ID, c.Name, c.Args))
		}
		turns = append(turns, reacttest.Turn(turn.Text, calls...))
	}
	var out bytes.Buffer
	_, err := story.Run(context.Background(), story.Config{Model: reacttest.Script(turns...), Out: &out, View: story.Conversation})
	require.NoError(t, err)
	for _, want := range chattest.StoryOutput() {
		assert.Contains(t, out.String(), want)
	}
}

func TestParseCases(t *testing.T) {
	toy.RunParseCases(t, hello, []chattest.ParseCase{
		{Name: "text", Reply: chattest.Reply{Body: `{"Text":"hi"}`}, Want: react.Response{Text: "hi"}, Reason: "the toy API's body is a Response"},
		{Name: "read", Reply: chattest.Reply{File: "loop_1_read.json"},
			Want:   react.Response{ToolCalls: []react.ToolCall{reacttest.Call("r1", "list_spaces", `{}`)}},
			Reason: "a testdata file"},
	})
}

func TestCannedServer(t *testing.T) {
	srv := chattest.CannedServer(http.StatusTeapot, `{"a":1}`)
	defer srv.Close()
	resp, err := chattest.HTTPClient(t).Get(srv.URL)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusTeapot, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.JSONEq(t, `{"a":1}`, string(b))
}

package modelkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEndpoint(t *testing.T) {
	for _, tt := range []struct {
		url  string
		host string
		port int
		why  string
	}{
		{"https://api.openai.com/v1/", "api.openai.com", 443, "https defaults to 443"},
		{"http://localhost:11434/v1/", "localhost", 11434, "an explicit port"},
		{"http://127.0.0.1/", "127.0.0.1", 80, "http defaults to 80"},
		{"https://[::1]:8443/x", "::1", 8443, "an IPv6 host without brackets"},
		{"", "", 0, "no URL"},
		{"http://[::1", "", 0, "a URL that does not parse"},
		{"/v1/", "", 0, "no host"},
		{"https://h:99999/", "h", 0, "a port out of range is no port"},
	} {
		h, p := modelkit.Endpoint(tt.url)
		assert.Equal(t, tt.host, h, "Endpoint(%q) host: %s", tt.url, tt.why)
		assert.Equal(t, tt.port, p, "Endpoint(%q) port: %s", tt.url, tt.why)
	}
}

func TestSettingsInfo(t *testing.T) {
	temp := 0.3
	got := modelkit.Settings{Temperature: &temp, MaxTokens: 100}.Info("anthropic", "claude", "https://api.anthropic.com", true)
	assert.Equal(t, react.ModelInfo{Provider: "anthropic", Name: "claude", ServerAddress: "api.anthropic.com", ServerPort: 443,
		Temperature: &temp, MaxTokens: 100, SystemApart: true}, got)
	got = modelkit.Settings{Provider: "aws.bedrock"}.Info("anthropic", "claude", "", false)
	assert.Equal(t, react.ModelInfo{Provider: "aws.bedrock", Name: "claude"}, got, "the host's provider wins over the default")
}

// sse is an event-stream response with body.
func sse(body io.Reader) *http.Response {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}, Body: io.NopCloser(body)}
}

// parseText yields each data line as a text chunk; "[END]" is the end
// marker, "[BAD]" an in-band error.
func parseText(ev modelkit.Event) ([]react.Chunk, bool, error) {
	switch ev.Data {
	case "[END]":
		return nil, true, nil
	case "[BAD]":
		return nil, false, modelkit.InBand("test", "overloaded_error", "", "busy")
	}
	return []react.Chunk{{Text: ev.Data}}, false, nil
}

// read collects what ReadSSE yields.
func read(ctx context.Context, resp *http.Response) (string, error) {
	var text strings.Builder
	var err error
	modelkit.ReadSSE(ctx, "test", resp, "[END]", 64, parseText, func(c react.Chunk, e error) bool {
		if e != nil {
			err = e
			return false
		}
		text.WriteString(c.Text)
		return true
	})
	return text.String(), err
}

func TestReadSSE(t *testing.T) {
	for _, tt := range []struct {
		name string
		resp *http.Response
		text string
		kind modelerr.Kind
		why  string
	}{
		{"complete", sse(strings.NewReader("data: a\n\n: keep-alive\n\ndata: b\r\n\r\ndata: [END]\n\ndata: never\n\n")), "ab", modelerr.Unknown,
			"chunks until the end marker, comments skipped, nothing read after it"},
		{"cut", sse(strings.NewReader("data: a\n\ndata: b\n\n")), "ab", modelerr.Truncated, "a stream without its end marker is Truncated"},
		{"cut mid-event", sse(strings.NewReader("data: a\n\ndata: [END]")), "a", modelerr.Truncated, "an event without its blank line is not dispatched"},
		{"in-band error", sse(strings.NewReader("data: a\n\ndata: [BAD]\n\n")), "a", modelerr.Overloaded, "parse's error ends the stream"},
		{"line too long", sse(strings.NewReader("data: " + strings.Repeat("x", 100) + "\n\n")), "", modelerr.Malformed, "a line past the bound"},
		{"not a stream", &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader("{}"))},
			"", modelerr.Malformed, "a JSON answer to a streaming request"},
		{"reset", sse(io.MultiReader(strings.NewReader("data: a\n\n"), errReader{errors.New("read: connection reset by peer")})), "a", modelerr.Unknown,
			"a read error is classified by modelerr.Classify"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text, err := read(context.Background(), tt.resp)
			assert.Equal(t, tt.text, text, tt.why)
			if tt.kind == modelerr.Unknown && tt.name == "complete" {
				assert.NoError(t, err, tt.why)
				return
			}
			require.Error(t, err, tt.why)
			var e *modelerr.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "test", e.Provider)
			if tt.name != "reset" {
				assert.Equal(t, tt.kind, e.Kind, tt.why)
			}
		})
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestReadSSECanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := read(ctx, sse(strings.NewReader("data: a\n\n")))
	assert.Equal(t, modelerr.Canceled, modelerr.KindOf(err), "a done context decides the kind, not the cut")
}

func TestReadSSEStopsWhenTheCallerDoes(t *testing.T) {
	n := 0
	modelkit.ReadSSE(context.Background(), "test", sse(strings.NewReader("data: a\n\ndata: b\n\n")), "[END]", 0, parseText,
		func(react.Chunk, error) bool { n++; return false })
	assert.Equal(t, 1, n, "nothing is yielded after yield returned false")
}

func TestInBand(t *testing.T) {
	assert.Equal(t, modelerr.RateLimited, modelerr.KindOf(modelkit.InBand("p", "server_error", "rate_limit_exceeded", "x")), "the code is the more precise")
	assert.Equal(t, modelerr.Overloaded, modelerr.KindOf(modelkit.InBand("p", "overloaded_error", "", "x")))
	assert.Equal(t, modelerr.Server, modelerr.KindOf(modelkit.InBand("p", "", "", "x")), "nothing named: the server failed mid-answer")
	e := modelkit.Malformed("p", "bad %d", 1)
	assert.Equal(t, "p: malformed (HTTP 200): bad 1", e.Error())
}

func TestTurns(t *testing.T) {
	calls := []react.ToolCall{{ID: "a", Name: "f", Args: json.RawMessage(`{}`)}, {ID: "b", Name: "g"}}
	history := []react.Message{
		{Role: react.RoleSystem, Content: "rules"},
		{Role: react.RoleUser, Content: "do it"},
		{Role: react.RoleAssistant, Content: "First.Then.", ToolCalls: calls, Parts: []react.Part{
			{Kind: react.PartOpaque, API: "mine", Data: []byte("thinking")},
			{Kind: react.PartOpaque, API: "theirs", Data: []byte("not for us")},
			{Kind: react.PartText, Text: "First."},
			{Kind: react.PartCall, Call: 0, API: "mine", Data: []byte("sig")},
			{Kind: react.PartText, Text: "Then."},
			{Kind: react.PartCall, Call: 1, API: "theirs", Data: []byte("their sig")},
		}},
		{Role: react.RoleSystem, Content: "hint"},
		{Role: react.RoleTool, ToolCallID: "a", Content: "ok"},
		{Role: react.RoleUser, Content: ""},
		{Role: react.RoleTool, ToolCallID: "b", Content: "failed", IsError: true},
		{Role: react.RoleUser, Content: "and now?"},
		{Role: react.RoleAssistant, Content: "plain", ToolCalls: calls[:1]},
	}
	system, turns, err := modelkit.Turns(history, "mine")
	require.NoError(t, err)
	assert.Equal(t, []string{"rules", "hint"}, system)
	require.Len(t, turns, 4)
	assert.Equal(t, []modelkit.Block{
		{Kind: modelkit.BlockOpaque, Data: []byte("thinking")},
		{Kind: modelkit.BlockText, Text: "First."},
		{Kind: modelkit.BlockCall, Call: calls[0], Data: []byte("sig")},
		{Kind: modelkit.BlockText, Text: "Then."},
		{Kind: modelkit.BlockCall, Call: calls[1]},
	}, turns[1].Blocks, "the parts in order, texts apart, another API's data left out")
	assert.False(t, turns[2].Assistant)
	kinds := []modelkit.BlockKind{}
	for _, b := range turns[2].Blocks {
		kinds = append(kinds, b.Kind)
	}
	assert.Equal(t, []modelkit.BlockKind{modelkit.BlockResult, modelkit.BlockResult, modelkit.BlockText}, kinds,
		"the results of a turn travel in one user turn, first")
	assert.Equal(t, []modelkit.Block{{Kind: modelkit.BlockText, Text: "plain"}, {Kind: modelkit.BlockCall, Call: calls[0]}}, turns[3].Blocks,
		"without parts: the text, then the calls")

	_, _, err = modelkit.Turns([]react.Message{{Role: react.RoleTool}}, "mine")
	assert.ErrorContains(t, err, "message 0")
	_, _, err = modelkit.Turns([]react.Message{{Role: "robot"}}, "mine")
	assert.ErrorContains(t, err, "unknown role")
}

func TestResultsFirst(t *testing.T) {
	a := react.Message{Role: react.RoleAssistant, ToolCalls: []react.ToolCall{{ID: "x"}}}
	hint := react.Message{Role: react.RoleUser, Content: "hint"}
	res := react.Message{Role: react.RoleTool, ToolCallID: "x"}
	in := []react.Message{{Role: react.RoleUser}, a, hint, res}
	out := modelkit.ResultsFirst(in)
	assert.Equal(t, []react.Message{{Role: react.RoleUser}, a, res, hint}, out)
	assert.Equal(t, hint, in[2], "the caller's slice is not changed")
	same := []react.Message{a, res, hint}
	assert.Equal(t, &same[0], &modelkit.ResultsFirst(same)[0], "nothing to move: the same slice")
}

func TestSchemaObject(t *testing.T) {
	m, err := modelkit.SchemaObject(json.RawMessage(`{"type":"object","properties":{"n":{"type":"number","maximum":1.50}}}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"n":{"type":"number","maximum":1.50}}`, string(m["properties"]))
	assert.Contains(t, string(m["properties"]), "1.50", "numbers survive exactly")
	m, err = modelkit.SchemaObject(json.RawMessage("  "))
	assert.NoError(t, err)
	assert.Nil(t, m, "no schema, no parameters")
	for _, bad := range []string{`[1]`, `null`, `{} {}`, `{"a":`} {
		_, err := modelkit.SchemaObject(json.RawMessage(bad))
		assert.Error(t, err, bad)
	}
}

func TestObjectArgs(t *testing.T) {
	assert.Equal(t, `{"a":1}`, string(modelkit.ObjectArgs(json.RawMessage(` {"a":1} `))))
	for _, bad := range []string{``, `[1]`, `{"a":`, `"x"`} {
		assert.Equal(t, `{}`, string(modelkit.ObjectArgs(json.RawMessage(bad))), bad)
	}
}

func TestCallIDs(t *testing.T) {
	ids := []string{"", "a", "a", "call_r_3", ""}
	modelkit.CallIDs(ids, "r")
	assert.Equal(t, []string{"call_r_0", "a", "call_r_2", "call_r_3", "call_r_4"}, ids)
	ids = []string{"call_r_0", ""}
	modelkit.CallIDs(ids, "r")
	assert.Equal(t, []string{"call_r_0", "call_r_1"}, ids)
	ids = []string{"", "call_r_0"}
	modelkit.CallIDs(ids, "r")
	assert.Equal(t, []string{"call_r_0", "call_r_1"}, ids, "a later id the generated one took is itself replaced")
	assert.Equal(t, modelkit.HashID([]byte("x")), modelkit.HashID([]byte("x")))
	assert.NotEqual(t, modelkit.HashID([]byte("x")), modelkit.HashID([]byte("y")))
}

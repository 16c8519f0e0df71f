package bedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/reactguard/reactguard/adapters/bedrock"
	"github.com/reactguard/reactguard/internal/chattest"
	"github.com/reactguard/reactguard/react"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type reply = chattest.Reply

const modelID = "us.anthropic.claude-haiku-4-5-20251001-v1:0"

func checkSigned(r *http.Request) error {
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDTEST/") {
		return fmt.Errorf("Authorization = %q; want a SigV4 signature of the test key", r.Header.Get("Authorization"))
	}
	return nil
}

var (
	converse = chattest.Endpoint{Path: "/model/" + modelID + "/converse", Check: checkSigned,
		Exhausted: `{"message":"no canned reply left"}`}
	converseStream = chattest.Endpoint{Path: "/model/" + modelID + "/converse-stream", Check: checkSigned,
		Exhausted: `{"message":"no canned reply left"}`}
)

var (
	adapter = chattest.Adapter{
		Provider: "bedrock", Endpoint: converse,
		NewModel: func(t testing.TB, u string) react.Model {
			return bedrock.New(client(t, u), modelID, &bedrock.Options{NoStream: true})
		},
		Valid: validHistory, ToolNames: toolNames, ToolResult: toolResult,
	}
	streaming = chattest.Adapter{
		Provider: "bedrock", Endpoint: converseStream,
		NewModel: func(t testing.TB, u string) react.Model {
			return collected{bedrock.New(client(t, u), modelID, nil)}
		},
		Valid: validHistory, ToolNames: toolNames, ToolResult: toolResult,
		Serve: func(t testing.TB, r reply) reply {
			if r.File == "" {
				return r
			}
			return streamed(t, r.File)
		},
	}
)

// collected is a streaming Model whose Generate is react.Collect of its
// stream, so that the shared scenarios' direct Generate calls stream too.
type collected struct{ *bedrock.Model }

func (c collected) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	return react.Collect(c.GenerateStream(ctx, req))
}

// client returns an SDK client pointed at baseURL, signing with a static
// test key, with its own transport closed when the test ends.
func client(t testing.TB, baseURL string) *bedrockruntime.Client {
	t.Helper()
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(baseURL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", Source: "test"}, nil
		}),
		HTTPClient: chattest.HTTPClient(t),
	})
}

func newModelURL(t testing.TB, url string) *bedrock.Model {
	t.Helper()
	return bedrock.New(client(t, url), modelID, nil)
}

func newModel(t testing.TB, s *chattest.Server, opts *bedrock.Options) *bedrock.Model {
	t.Helper()
	return bedrock.New(client(t, s.URL), modelID, opts)
}

var hello = react.Request{
	Messages: []react.Message{{Role: react.RoleUser, Content: "go"}},
	Tools:    []react.ToolSpec{{Name: "list_spaces", Description: "List spaces.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
}

func messages(req map[string]any) []map[string]any {
	ms, _ := req["messages"].([]any)
	out := make([]map[string]any, 0, len(ms))
	for _, m := range ms {
		mm, _ := m.(map[string]any)
		out = append(out, mm)
	}
	return out
}

func content(m map[string]any) []map[string]any {
	cs, _ := m["content"].([]any)
	out := make([]map[string]any, 0, len(cs))
	for _, c := range cs {
		cm, _ := c.(map[string]any)
		out = append(out, cm)
	}
	return out
}

// validHistory checks what Converse enforces: roles alternate from user;
// an assistant message with toolUse blocks is followed by a user message
// holding a toolResult for each, ids unique in the history.
func validHistory(req map[string]any) error {
	ms := messages(req)
	seen := map[string]bool{}
	for i, m := range ms {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m["role"] != want {
			return fmt.Errorf("message %d: role %v; want %s", i, m["role"], want)
		}
		var ids []string
		for _, c := range content(m) {
			if tu, ok := c["toolUse"].(map[string]any); ok {
				id, _ := tu["toolUseId"].(string)
				if seen[id] {
					return fmt.Errorf("message %d: toolUseId %s twice", i, id)
				}
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 || i+1 >= len(ms) {
			continue
		}
		got := map[string]bool{}
		for _, c := range content(ms[i+1]) {
			if tr, ok := c["toolResult"].(map[string]any); ok {
				id, _ := tr["toolUseId"].(string)
				got[id] = true
			}
		}
		for _, id := range ids {
			if !got[id] {
				return fmt.Errorf("message %d: toolUse %s has no toolResult", i, id)
			}
		}
	}
	return nil
}

func toolNames(req map[string]any) []string {
	var out []string
	tc, _ := req["toolConfig"].(map[string]any)
	tools, _ := tc["tools"].([]any)
	for _, t := range tools {
		out = append(out, t.(map[string]any)["toolSpec"].(map[string]any)["name"].(string))
	}
	sort.Strings(out)
	return out
}

func toolResult(req map[string]any, callID string) (string, bool) {
	for _, m := range messages(req) {
		for _, c := range content(m) {
			tr, ok := c["toolResult"].(map[string]any)
			if !ok || tr["toolUseId"] != callID {
				continue
			}
			var text string
			cs, _ := tr["content"].([]any)
			for _, x := range cs {
				s, _ := x.(map[string]any)["text"].(string)
				text += s
			}
			return text, true
		}
	}
	return "", false
}

// frame is one message of an event stream: an event of a type, or an
// exception.
type frame struct {
	event, exception string
	payload          string
}

// encode writes frames in the AWS event-stream binary encoding with the
// SDK's own encoder.
func encode(t testing.TB, frames ...frame) string {
	t.Helper()
	var b bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, f := range frames {
		var msg eventstream.Message
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		if f.exception != "" {
			msg.Headers.Set(":message-type", eventstream.StringValue("exception"))
			msg.Headers.Set(":exception-type", eventstream.StringValue(f.exception))
		} else {
			msg.Headers.Set(":message-type", eventstream.StringValue("event"))
			msg.Headers.Set(":event-type", eventstream.StringValue(f.event))
		}
		msg.Payload = []byte(f.payload)
		require.NoError(t, enc.Encode(&b, msg))
	}
	return b.String()
}

func streamReply(t testing.TB, frames ...frame) reply {
	return reply{Body: encode(t, frames...), ContentType: "application/vnd.amazon.eventstream"}
}

// streamed renders a canned Converse response as ConverseStream sends it:
// messageStart, per block its start (toolUse), deltas (text and input in
// two halves, reasoning text then signature) and stop, messageStop,
// metadata.
func streamed(t testing.TB, file string) reply {
	t.Helper()
	body, err := os.ReadFile("testdata/" + file)
	require.NoError(t, err)
	var r struct {
		Output struct {
			Message struct {
				Content []map[string]json.RawMessage `json:"content"`
			} `json:"message"`
		} `json:"output"`
		StopReason string          `json:"stopReason"`
		Usage      json.RawMessage `json:"usage"`
	}
	require.NoError(t, json.Unmarshal(body, &r))
	js := func(v any) string { b, err := json.Marshal(v); require.NoError(t, err); return string(b) }
	frames := []frame{{event: "messageStart", payload: `{"role":"assistant"}`}}
	for i, c := range r.Output.Message.Content {
		delta := func(d any) frame {
			return frame{event: "contentBlockDelta", payload: js(map[string]any{"contentBlockIndex": i, "delta": d})}
		}
		switch {
		case c["text"] != nil:
			var s string
			require.NoError(t, json.Unmarshal(c["text"], &s))
			h := len(s) / 2
			frames = append(frames, delta(map[string]any{"text": s[:h]}), delta(map[string]any{"text": s[h:]}))
		case c["toolUse"] != nil:
			var tu struct {
				ID    string          `json:"toolUseId"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			}
			require.NoError(t, json.Unmarshal(c["toolUse"], &tu))
			frames = append(frames, frame{event: "contentBlockStart", payload: js(map[string]any{"contentBlockIndex": i,
				"start": map[string]any{"toolUse": map[string]any{"toolUseId": tu.ID, "name": tu.Name}}})})
			var cb bytes.Buffer
			require.NoError(t, json.Compact(&cb, tu.Input))
			in := cb.String()
			h := len(in) / 2
			frames = append(frames, delta(map[string]any{"toolUse": map[string]any{"input": in[:h]}}), delta(map[string]any{"toolUse": map[string]any{"input": in[h:]}}))
		case c["reasoningContent"] != nil:
			var rc struct {
				RT struct{ Text, Signature string } `json:"reasoningText"`
			}
			require.NoError(t, json.Unmarshal(c["reasoningContent"], &rc))
			frames = append(frames, delta(map[string]any{"reasoningContent": map[string]any{"text": rc.RT.Text}}),
				delta(map[string]any{"reasoningContent": map[string]any{"signature": rc.RT.Signature}}))
		}
		frames = append(frames, frame{event: "contentBlockStop", payload: js(map[string]any{"contentBlockIndex": i})})
	}
	frames = append(frames, frame{event: "messageStop", payload: js(map[string]any{"stopReason": r.StopReason})},
		frame{event: "metadata", payload: `{"usage":` + string(r.Usage) + `,"metrics":{"latencyMs":812}}`})
	return streamReply(t, frames...)
}

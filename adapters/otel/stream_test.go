package otel_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	rgotel "github.com/reactguard/reactguard/adapters/otel"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
	"github.com/reactguard/reactguard/tool"
)

// streamed is a streaming model that names itself as OpenAI's gpt-4.1.
type streamed struct {
	*reacttest.StreamModel
}

func (streamed) Describe() react.ModelInfo {
	return react.ModelInfo{Provider: "openai", Name: "gpt-4.1"}
}

// The chat span of a streamed call records the time to its first chunk,
// and so does the conventions' gen_ai.client.operation.time_to_first_chunk
// metric; a call that was not streamed records neither.
func TestStreamedChatSpan(t *testing.T) {
	tel := newTelemetry(t)
	s := newSite(t)
	m := streamed{reacttest.Stream(
		reacttest.Split(reacttest.Turn("Looking.", reacttest.Call("c1", "list_sites", `{"page":1}`)), 3),
		reacttest.Split(reacttest.Calls(reacttest.Finish("f", "done")), 3),
	)}
	_, err := s.loop(t, m, tel.observer(t, nil), stores()).Run(context.Background(), siteNode(), "hi")
	require.NoError(t, err)
	chat := tel.ended("chat gpt-4.1")
	require.Len(t, chat, 2)
	a := attrs(chat[0])
	assert.Equal(t, true, a["reactguard.streamed"])
	assert.InDelta(t, 0.001, a["reactguard.time_to_first_chunk"], 1e-9, "the test clock: 1 ms from the start to the first chunk")
	ttfc, ok := tel.metrics(t)["gen_ai.client.operation.time_to_first_chunk"]
	require.True(t, ok)
	h := ttfc.Data.(metricdata.Histogram[float64])
	require.Len(t, h.DataPoints, 1)
	assert.EqualValues(t, 2, h.DataPoints[0].Count)
	assert.Equal(t, "s", ttfc.Unit)

	plain := newTelemetry(t)
	_, err = newSite(t).loop(t, openAI(reacttest.Calls(reacttest.Finish("f", "done"))), plain.observer(t, nil), stores()).
		Run(context.Background(), siteNode(), "hi")
	require.NoError(t, err)
	assert.NotContains(t, attrs(plain.ended("chat gpt-4.1")[0]), "reactguard.time_to_first_chunk")
	_, ok = plain.metrics(t)["gen_ai.client.operation.time_to_first_chunk"]
	assert.False(t, ok, "SHOULD NOT be reported for calls that were not streamed")
}

// Without content capture, no text of a tool's error or of the model's
// fail reason reaches a span status: the code or failure kind alone.
func TestStatusWithoutContent(t *testing.T) {
	for _, capture := range []bool{false, true} {
		tel := newTelemetry(t)
		s := newSite(t)
		m := openAI(
			reacttest.Calls(reacttest.Call("c1", "get_stats", `{}`)),
			reacttest.Calls(reacttest.Call("f", react.ToolFail, `{"reason":"the user's card 4111 1111 is blocked"}`)),
		)
		res, err := s.loop(t, m, tel.observer(t, &rgotel.Options{CaptureContent: capture}), stores()).Run(context.Background(), siteNode(), "hi")
		require.NoError(t, err)
		require.Equal(t, react.Failed, res.Status)
		stats := tel.ended("execute_tool get_stats")[0]
		run := tel.ended("invoke_agent sites")[0]
		assert.Equal(t, codes.Error, stats.Status().Code)
		assert.Equal(t, codes.Error, run.Status().Code)
		if !capture {
			assert.Equal(t, "TOOL_UNAVAILABLE", stats.Status().Description, "the code, not the tool's error text")
			assert.Equal(t, "model", run.Status().Description, "the failure kind, not the model's words")
			for _, sp := range tel.spans.Ended() {
				assert.NotContains(t, sp.Status().Description, "stats backend down")
				assert.NotContains(t, sp.Status().Description, "4111")
			}
			continue
		}
		assert.Contains(t, stats.Status().Description, "stats backend down")
		assert.Contains(t, run.Status().Description, "4111")
	}
}

// Captured contents are bounded: a 5 MB result is cut to the bound and
// the span says which attribute was cut and how much.
func TestContentBounded(t *testing.T) {
	big := strings.Repeat("é", 2<<20) // 4 MiB of two-byte runes
	huge := reacttest.Succeed("huge", map[string]any{"blob": big})
	cat, err := tool.NewCatalog(huge.Tool)
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		max  int
		kept int // the bound; -1 for none
	}{
		{"default", 0, rgotel.DefaultMaxContentBytes},
		{"odd bound", 1001, 1001}, // cut between UTF-8 sequences, at most the bound
		{"no bound", -1, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tel := newTelemetry(t)
			l, err := react.New(react.Config{
				Model:    openAI(reacttest.Calls(reacttest.Call("c1", "huge", `{}`)), reacttest.Calls(reacttest.Finish("f", "done"))),
				Tools:    cat,
				Observer: tel.observer(t, &rgotel.Options{CaptureContent: true, MaxContentBytes: tt.max}),
			})
			require.NoError(t, err)
			_, err = l.Run(context.Background(), react.Node{Name: "big", Tools: []string{"huge"}}, "hi")
			require.NoError(t, err)
			sp := tel.ended("execute_tool huge")[0]
			result := attrs(sp)["gen_ai.tool.call.result"].(string)
			ev := truncation(sp, "gen_ai.tool.call.result")
			if tt.kept < 0 {
				assert.Greater(t, len(result), 4<<20)
				assert.Nil(t, ev)
				return
			}
			assert.LessOrEqual(t, len(result), tt.kept)
			assert.GreaterOrEqual(t, len(result), tt.kept-3, "cut at most a UTF-8 sequence short")
			assert.True(t, utf8.ValidString(result), "never inside a UTF-8 sequence")
			require.NotNil(t, ev, "the truncation is noted")
			assert.EqualValues(t, len(result), ev["reactguard.content.kept"])
			assert.Greater(t, ev["reactguard.content.bytes"], int64(4<<20))
			for _, c := range tel.ended("chat gpt-4.1") {
				for k, v := range attrs(c) {
					if s, ok := v.(string); ok {
						assert.LessOrEqual(t, len(s), tt.kept, "%s is bounded too", k)
					}
				}
			}
		})
	}
}

// truncation returns the attributes of sp's truncation event for key.
func truncation(sp sdktrace.ReadOnlySpan, key string) map[string]any {
	for _, e := range sp.Events() {
		if e.Name != "reactguard.content.truncated" {
			continue
		}
		m := map[string]any{}
		for _, kv := range e.Attributes {
			m[string(kv.Key)] = kv.Value.AsInterface()
		}
		if m["reactguard.content.attribute"] == key {
			return m
		}
	}
	return nil
}

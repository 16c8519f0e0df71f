package otel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	rgotel "github.com/reactguard/reactguard/adapters/otel"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
)

// A model that names its endpoint and request parameters, and takes the
// system instructions apart (as Anthropic, Gemini, Bedrock and the
// Responses API do), gets them on its chat spans; tool spans carry the
// tool's description.
func TestRequestAttributes(t *testing.T) {
	temp, topP := 0.2, 0.9
	info := react.ModelInfo{Provider: "anthropic", Name: "claude-haiku-4-5", ServerAddress: "api.anthropic.com", ServerPort: 443,
		Temperature: &temp, TopP: &topP, MaxTokens: 2048, SystemApart: true}
	for _, capture := range []bool{false, true} {
		tel := newTelemetry(t)
		s := newSite(t)
		m := model{Model: reacttest.Script(
			reacttest.Calls(reacttest.Call("c1", "list_sites", `{}`)),
			reacttest.Calls(reacttest.Finish("f", "done")),
		), info: info}
		_, err := s.loop(t, m, tel.observer(t, &rgotel.Options{CaptureContent: capture}), stores()).
			Run(context.Background(), siteNode(), "list my sites")
		require.NoError(t, err)
		chat := tel.ended("chat claude-haiku-4-5")
		require.Len(t, chat, 2)
		a := attrs(chat[0])
		assert.Equal(t, "api.anthropic.com", a["server.address"])
		assert.Equal(t, int64(443), a["server.port"])
		assert.Equal(t, 0.2, a["gen_ai.request.temperature"])
		assert.Equal(t, 0.9, a["gen_ai.request.top_p"])
		assert.Equal(t, int64(2048), a["gen_ai.request.max_tokens"])
		ms := tel.metrics(t)
		dur, ok := ms["gen_ai.client.operation.duration"].Data.(metricdata.Histogram[float64])
		require.True(t, ok)
		require.Len(t, dur.DataPoints, 1)
		usage, ok := ms["gen_ai.client.token.usage"].Data.(metricdata.Histogram[int64])
		require.True(t, ok)
		for _, dp := range append([]metricdata.HistogramDataPoint[float64]{dur.DataPoints[0]}, toFloat(usage.DataPoints)...) {
			addr, _ := dp.Attributes.Value("server.address")
			port, _ := dp.Attributes.Value("server.port")
			assert.Equal(t, "api.anthropic.com", addr.AsString(), "the metrics carry the endpoint too")
			assert.Equal(t, int64(443), port.AsInt64())
		}
		list := attrs(tel.ended("execute_tool list_sites")[0])
		assert.Equal(t, s.list.Tool.Description, list["gen_ai.tool.description"])
		require.NotEmpty(t, s.list.Tool.Description)
		if !capture {
			assert.NotContains(t, a, "gen_ai.system_instructions", "content only with opt-in")
			continue
		}
		sys, _ := a["gen_ai.system_instructions"].(string)
		assert.Contains(t, sys, `[{"type":"text","content":"You complete the task by calling tools. Rules:`)
		in, _ := a["gen_ai.input.messages"].(string)
		assert.NotContains(t, in, `"role":"system"`, "the instructions are not recorded as a message too")
		assert.Contains(t, in, `{"role":"user","parts":[{"type":"text","content":"list my sites"}]}`)
	}
}

// toFloat keeps the attributes of int64 data points in float64 ones.
func toFloat(dps []metricdata.HistogramDataPoint[int64]) []metricdata.HistogramDataPoint[float64] {
	out := make([]metricdata.HistogramDataPoint[float64], len(dps))
	for i, dp := range dps {
		out[i].Attributes = dp.Attributes
	}
	return out
}

// A model that says nothing of its endpoint gets no server attributes,
// and its system message stays an input message.
func TestNoRequestAttributes(t *testing.T) {
	tel := newTelemetry(t)
	s := newSite(t)
	m := openAI(reacttest.Calls(reacttest.Finish("f", "done")))
	_, err := s.loop(t, m, tel.observer(t, &rgotel.Options{CaptureContent: true}), stores()).Run(context.Background(), siteNode(), "hi")
	require.NoError(t, err)
	a := attrs(tel.ended("chat gpt-4.1")[0])
	for _, k := range []string{"server.address", "server.port", "gen_ai.request.temperature", "gen_ai.request.max_tokens", "gen_ai.system_instructions"} {
		assert.NotContains(t, a, k)
	}
	dur, ok := tel.metrics(t)["gen_ai.client.operation.duration"].Data.(metricdata.Histogram[float64])
	require.True(t, ok)
	for _, dp := range dur.DataPoints {
		assert.False(t, dp.Attributes.HasValue("server.address"))
		assert.False(t, dp.Attributes.HasValue("server.port"))
	}
	assert.Contains(t, a["gen_ai.input.messages"], `"role":"system"`)
}

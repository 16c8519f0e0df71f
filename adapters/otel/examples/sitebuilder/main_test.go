package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// span is what the test reads of one span printed by the stdout exporter.
type span struct {
	Name        string
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct{ SpanID string }
	Links       []struct{ SpanContext struct{ SpanID string } }
	Attributes  []struct {
		Key   string
		Value struct{ Value any }
	}
}

func (s span) attr(key string) any {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.Value
		}
	}
	return nil
}

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

// runProgram runs the program and returns its stdout, stderr and the spans
// it printed.
func runProgram(t *testing.T, vars map[string]string, args ...string) (string, []span) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, env(vars), strings.NewReader(""), false, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())
	out := stdout.String()
	_, printed, found := strings.Cut(out, "-- spans (")
	if !found {
		return out, nil
	}
	_, printed, _ = strings.Cut(printed, "\n")
	var spans []span
	dec := json.NewDecoder(strings.NewReader(printed))
	for {
		var s span
		if err := dec.Decode(&s); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		spans = append(spans, s)
	}
	return out, spans
}

// -spans prints the story's span tree: two invoke_agent spans (the run
// until the approval, the resumed run linked to it), each the parent of
// its chat and execute_tool spans.
func TestSpans(t *testing.T) {
	out, spans := runProgram(t, nil, "-spans", "-approve")
	assert.Contains(t, out, "-- finished after 6 rounds")
	assert.Contains(t, out, "-- spans (OpenTelemetry GenAI conventions v1.36.0, stdout exporter)")
	var runs []span
	byID := map[string]span{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID] = s
		if s.Name == "invoke_agent create_site" {
			runs = append(runs, s)
		}
	}
	require.Len(t, runs, 2, "the run until it suspends and the resumed run")
	assert.Empty(t, runs[0].Links)
	require.Len(t, runs[1].Links, 1)
	assert.Equal(t, runs[0].SpanContext.SpanID, runs[1].Links[0].SpanContext.SpanID, "the resumed run links to the first")
	assert.Equal(t, "suspended", runs[0].attr("reactguard.run.status"))
	assert.Equal(t, "approval", runs[0].attr("reactguard.suspension.kind"))
	assert.Equal(t, "finished", runs[1].attr("reactguard.run.status"))
	var names []string
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "invoke_agent") {
			continue
		}
		parent, ok := byID[s.Parent.SpanID]
		require.True(t, ok, "%s has a printed parent", s.Name)
		assert.Equal(t, "invoke_agent create_site", parent.Name)
		names = append(names, s.Name)
		if s.Name == "execute_tool create_site" && s.attr("reactguard.tool.outcome") == "DEFERRED" {
			assert.Equal(t, "APPROVAL_REQUIRED", s.attr("reactguard.tool.code"))
		}
	}
	assert.Contains(t, names, "chat sitebuilder-script")
	assert.Contains(t, names, "execute_tool builtin_node_approval")
	assert.Equal(t, "reacttest", spans[0].attr("gen_ai.system"), "v1.36.0 by default")
}

func TestSpansLatestConventions(t *testing.T) {
	out, spans := runProgram(t, map[string]string{"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}, "-spans", "-decline")
	assert.Contains(t, out, "conventions v1.41.0")
	require.NotEmpty(t, spans)
	assert.Equal(t, "reacttest", spans[0].attr("gen_ai.provider.name"))
}

func TestNoSpansWithoutFlag(t *testing.T) {
	out, spans := runProgram(t, nil, "-approve")
	assert.Contains(t, out, "-- finished after 6 rounds")
	assert.Nil(t, spans)
	assert.NotContains(t, out, "SpanContext")
}

func TestBadFlag(t *testing.T) {
	code := run(context.Background(), []string{"-nope"}, env(nil), strings.NewReader(""), false, io.Discard, io.Discard)
	assert.Equal(t, 2, code)
}

package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/tool"
)

type weatherIn struct {
	City string `json:"city"`
	Days int    `json:"days,omitempty"`
}

type weatherOut struct {
	City string `json:"city"`
	Temp int    `json:"temp"`
}

func weather(_ context.Context, in weatherIn) (weatherOut, error) {
	return weatherOut{City: in.City, Temp: 20 + in.Days}, nil
}

func TestNewInfersSchema(t *testing.T) {
	tl := tool.New("weather", "current weather", weather)
	assert.Equal(t, "weather", tl.Name)
	assert.Equal(t, "current weather", tl.Description)
	assert.Equal(t, tool.Unspecified, tl.Effect, "New leaves the effect undeclared (counts as write)")
	s := tl.InputSchema
	require.NotNil(t, s)
	assert.Equal(t, "object", s.Type)
	assert.Equal(t, []string{"city"}, s.Required, "fields without omitempty are required, the others are not")
	assert.Contains(t, s.Properties, "city")
	assert.Contains(t, s.Properties, "days")
	assert.Equal(t, &jsonschema.Schema{Not: &jsonschema.Schema{}}, s.AdditionalProperties, "additionalProperties is false")

	tool.MustCatalog(tl)
	rs := tl.Resolved()
	require.NotNil(t, rs)
	cases := []struct {
		name   string
		reason string
		args   string
		ok     bool
	}{
		{"required only", "days is optional", `{"city":"Paris"}`, true},
		{"all fields", "both declared fields", `{"city":"Paris","days":2}`, true},
		{"missing required", "city has no omitempty", `{"days":2}`, false},
		{"extra field", "additionalProperties is false", `{"city":"Paris","x":1}`, false},
		{"wrong type", "days is an integer", `{"city":"Paris","days":"2"}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			require.NoError(t, json.Unmarshal([]byte(tc.args), &v))
			err := rs.Validate(v)
			assert.Equalf(t, tc.ok, err == nil, "Validate(%s) = %v; want ok=%v (%s)", tc.args, err, tc.ok, tc.reason)
		})
	}
}

func TestNewDecodesArguments(t *testing.T) {
	var got weatherIn
	called := 0
	tl := tool.New("weather", "", func(_ context.Context, in weatherIn) (weatherOut, error) {
		called++
		got = in
		return weatherOut{City: in.City}, nil
	})
	cases := []struct {
		name    string
		reason  string
		args    string
		want    weatherIn
		argsErr bool
	}{
		{"object", "decodes every field", `{"city":"Paris","days":3}`, weatherIn{"Paris", 3}, false},
		{"empty args", "no arguments leave In at its zero value", ``, weatherIn{}, false},
		{"null", "JSON null leaves In at its zero value", `null`, weatherIn{}, false},
		{"trailing whitespace", "whitespace after the object is not data", "{\"city\":\"Rome\"} \n", weatherIn{City: "Rome"}, false},
		{"unknown field", "as strict as additionalProperties false", `{"city":"Paris","cty":"x"}`, weatherIn{}, true},
		{"trailing data", "one JSON value only", `{"city":"Paris"}{"city":"Rome"}`, weatherIn{}, true},
		{"trailing garbage", "one JSON value only", `{"city":"Paris"}]`, weatherIn{}, true},
		{"wrong type", "days is an int", `{"days":"three"}`, weatherIn{}, true},
		{"not JSON", "model garbage", `city=Paris`, weatherIn{}, true},
		{"array", "arguments are an object", `["Paris"]`, weatherIn{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			called, got = 0, weatherIn{}
			res, err := tl.Func(context.Background(), tool.Request{Args: json.RawMessage(tc.args)})
			if tc.argsErr {
				var ae *tool.ArgsError
				require.Truef(t, errors.As(err, &ae), "Func(%s) error = %v; want *tool.ArgsError (%s)", tc.args, err, tc.reason)
				assert.Equal(t, "weather", ae.Tool)
				assert.NotNil(t, errors.Unwrap(ae), "ArgsError unwraps to the decoding error")
				assert.Contains(t, ae.Error(), "tool weather: arguments: ")
				assert.Zero(t, called, "fn must not run on undecodable arguments")
				assert.Nil(t, res)
				return
			}
			require.NoErrorf(t, err, "Func(%s) (%s)", tc.args, tc.reason)
			assert.Equal(t, 1, called)
			assert.Equalf(t, tc.want, got, "Func(%s) decoded %+v; want %+v (%s)", tc.args, got, tc.want, tc.reason)
			assert.Equal(t, weatherOut{City: tc.want.City}, res)
		})
	}
}

func TestNewPassesErrors(t *testing.T) {
	boom := errors.New("boom")
	tl := tool.New("x", "", func(context.Context, struct{}) (any, error) { return nil, boom })
	_, err := tl.Func(context.Background(), tool.Request{Args: json.RawMessage(`{}`)})
	assert.Same(t, boom, err, "New returns fn's error unchanged")
}

func TestNewPanicsWithoutSchema(t *testing.T) {
	assert.Panics(t, func() {
		tool.New("bad", "", func(context.Context, chan int) (any, error) { return nil, nil })
	}, "New with an argument type that has no JSON Schema must panic")
}

func TestEffect(t *testing.T) {
	cases := []struct {
		effect  tool.Effect
		reason  string
		isWrite bool
		str     string
	}{
		{tool.Unspecified, "an undeclared effect counts as write (the safe side)", true, "unspecified"},
		{tool.Read, "a read has no side effect", false, "read"},
		{tool.Write, "a write changes the world", true, "write"},
		{tool.Effect(7), "an unknown effect is not a read", true, "effect(7)"},
	}
	for _, tc := range cases {
		assert.Equalf(t, tc.isWrite, tc.effect.IsWrite(), "%v.IsWrite() = %v; want %v (%s)", tc.effect, tc.effect.IsWrite(), tc.isWrite, tc.reason)
		assert.Equal(t, tc.str, tc.effect.String())
	}
}

func TestSourceKindString(t *testing.T) {
	assert.Equal(t, "free", tool.FromAny.String())
	assert.Equal(t, "user", tool.FromUser.String())
	assert.Equal(t, "result", tool.FromResult.String())
	assert.Equal(t, "source(5)", tool.SourceKind(5).String())
	assert.Equal(t, tool.Source{Kind: tool.FromResult, Tool: "list", Field: "items.id"}, tool.Result("list", "items.id"))
	assert.Equal(t, tool.Source{Kind: tool.FromUser}, tool.User())
	assert.Equal(t, tool.Source{}, tool.Free(), "Free is the zero Source")
}

// TestNewPassesTheRequest: the function of a typed tool reads its call's
// Request from its context; a context without one reports false.
func TestNewPassesTheRequest(t *testing.T) {
	var got tool.Request
	var ok bool
	tl := tool.New("pay", "", func(ctx context.Context, in struct {
		Amount int `json:"amount"`
	}) (int, error) {
		got, ok = tool.RequestFrom(ctx)
		return in.Amount, nil
	})
	req := tool.Request{Run: "run-1", CallID: "c1", Args: json.RawMessage(`{"amount":5}`), Attempt: 2, IdempotencyKey: "rg-key"}
	res, err := tl.Func(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, 5, res)
	assert.True(t, ok, "RequestFrom in a typed tool = false; want the call's request")
	assert.Equal(t, req, got, "RequestFrom returns the request the Func received")

	_, ok = tool.RequestFrom(context.Background())
	assert.False(t, ok, "RequestFrom(a context without a request) = true")
	back, ok := tool.RequestFrom(tool.ContextWithRequest(context.Background(), req))
	assert.True(t, ok)
	assert.Equal(t, req, back, "ContextWithRequest round trip")
}

// TestRequestContextKeepsItsParent: the context a typed tool receives is
// its parent's in every other respect: values, deadline, cancellation
// (contexts derived from it are cancelled with the parent).
func TestRequestContextKeepsItsParent(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	ctx := tool.ContextWithRequest(parent, tool.Request{CallID: "c1"})
	assert.Equal(t, "v", ctx.Value(key{}), "other values come from the parent")
	_, has := ctx.Deadline()
	assert.False(t, has)
	child, stop := context.WithTimeout(ctx, time.Hour)
	defer stop()
	cancel()
	<-child.Done()
	assert.ErrorIs(t, child.Err(), context.Canceled, "a context derived from it is cancelled with the parent")
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	req, ok := tool.RequestFrom(child)
	assert.True(t, ok, "a derived context still carries the request")
	assert.Equal(t, "c1", req.CallID)
}

package react_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
)

// modelFunc is a Model that is a func: its nil value is a typed nil.
type modelFunc func(context.Context, react.Request) (react.Response, error)

func (f modelFunc) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	return f(ctx, req)
}

// TestNewRefusesNilModels: a nil Model, and a typed nil in a non-nil
// interface (which would panic at the first Generate), are refused by New
// with ErrNoModel and an error that names the type.
func TestNewRefusesNilModels(t *testing.T) {
	tests := []struct {
		name   string
		model  react.Model
		want   string // a part of the error; "" checks only ErrNoModel
		reason string
	}{
		{"nil", nil, "", "no model at all"},
		{"nil pointer", (*script)(nil), "Config.Model is a nil *react_test.script; pass a value that answers Generate", "a typed nil pointer would panic in Run"},
		{"nil func", modelFunc(nil), "Config.Model is a nil react_test.modelFunc", "a nil func implementing Model would panic when called"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := react.New(react.Config{Model: tc.model})
			require.ErrorIsf(t, err, react.ErrNoModel, "New(%s) error = %v; want ErrNoModel (%s)", tc.name, err, tc.reason)
			assert.Nilf(t, l, "New(%s) returned a loop with its error", tc.name)
			assert.Containsf(t, err.Error(), tc.want, "New(%s) error = %q; want it to say %q (%s)", tc.name, err, tc.want, tc.reason)
		})
	}
	_, err := react.New(react.Config{Model: modelFunc(func(context.Context, react.Request) (react.Response, error) {
		return react.Response{}, nil
	})})
	assert.NoError(t, err, "a non-nil func model is accepted")
}

// TestNilContextIsRefused: Run, Resume and ResumeRun refuse a nil context
// with ErrNilContext, naming the method, and run nothing.
func TestNilContextIsRefused(t *testing.T) {
	m := newScript(turn(call("f", react.ToolFollowUp, `{"question":"Which space?"}`)), turn(call("d", react.ToolFinish, `{}`)))
	e := newEnv(t, m)
	res := e.run(react.Node{}, "create a site")
	require.Equal(t, react.Suspended, res.Status)

	var nilCtx context.Context
	tests := []struct {
		name string
		call func() (react.Result, error)
	}{
		{"Run", func() (react.Result, error) { return e.loop.Run(nilCtx, react.Node{}, "hello") }},
		{"Resume", func() (react.Result, error) {
			return e.loop.Resume(nilCtx, res.Snapshot, react.Answer(res.Suspension.Ticket, "Sales"))
		}},
		{"ResumeRun", func() (react.Result, error) {
			return e.loop.ResumeRun(nilCtx, res.Run, react.Answer(res.Suspension.Ticket, "Sales"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.call()
			require.ErrorIsf(t, err, react.ErrNilContext, "%s(nil ctx) error = %v; want ErrNilContext", tc.name, err)
			assert.Containsf(t, err.Error(), "("+tc.name+")", "%s(nil ctx) error = %q; want it to name the method", tc.name, err)
			assert.Equalf(t, react.Result{}, got, "%s(nil ctx) result = %+v; want the zero result", tc.name, got)
		})
	}
	assert.Lenf(t, m.requests(), 1, "the model was asked %d times; want once (the nil-context calls ran nothing)", len(m.requests()))
	again, err := e.loop.Resume(context.Background(), res.Snapshot, react.Answer(res.Suspension.Ticket, "Sales"))
	require.NoError(t, err, "the snapshot is still resumable: the refused Resume claimed nothing")
	assert.Equal(t, react.Finished, again.Status)
}

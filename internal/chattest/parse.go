package chattest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/react"
)

// ParseCase is a canned response and the turn the adapter must make of
// it.
type ParseCase struct {
	Name   string
	Reply  Reply // the server's only reply, usually a testdata File
	Want   react.Response
	Reason string
}

// RunParseCases runs each case as a subtest named after it: one Generate
// of req against a server replaying the case's reply must succeed and
// return the case's Response exactly; its Parts are compared only when
// the case names them (Want.Parts not nil). It uses a.Endpoint and
// a.NewModel.
func (a Adapter) RunParseCases(t *testing.T, req react.Request, cases []ParseCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			got, err := a.Model(t, a.NewServer(t, tt.Reply)).Generate(context.Background(), req)
			require.NoError(t, err)
			if tt.Want.Parts == nil {
				got.Parts = nil
			}
			assert.Equal(t, tt.Want, got, "Generate(%s) = %+v; want %+v (%s)", tt.Name, got, tt.Want, tt.Reason)
		})
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The run streamed to a terminal, approved and declined; the output is
// compared with testdata (go test -update rewrites it).
func TestTerminal(t *testing.T) {
	for _, tt := range []struct{ name, stdin string }{{"approve", "y\n"}, {"decline", "n\n"}} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), []string{"-delay", "0"}, strings.NewReader(tt.stdin), &out, &errOut)
			require.Equal(t, 0, code, errOut.String())
			golden := filepath.Join("testdata", tt.name+".txt")
			if os.Getenv("UPDATE_GOLDEN") != "" {
				require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), out.String())
		})
	}
}

func TestTerminalBadFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"-nope"}, strings.NewReader(""), &out, &errOut))
}

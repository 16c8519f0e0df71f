package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite the golden outputs in testdata/")

// sizes hides the snapshot's size, which varies with its seal time.
var sizes = regexp.MustCompile(`\(\d+ bytes\)`)

func TestExample(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
	}{{"approve", nil}, {"decline", []string{"-decline"}}} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			require.Equal(t, 0, run(context.Background(), tt.args, &out, &errb), errb.String())
			got := sizes.ReplaceAllString(out.String(), "(N bytes)")
			path := filepath.Join("testdata", tt.name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./examples/tasks -update")
			assert.Equal(t, string(want), got)
		})
	}
	var out, errb bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"-nope"}, &out, &errb))
}

package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// sitebuilder runs the demo with args and stdin and returns its exit code
// and outputs.
func sitebuilder(t *testing.T, stdin string, interactive bool, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), interactive, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./examples/sitebuilder -update to create it")
	assert.Equal(t, string(want), got, "the transcript of %s changed; review and run with -update", name)
}

func TestDemo(t *testing.T) {
	tests := []struct {
		name        string
		reason      string
		args        []string
		stdin       string
		interactive bool
		want        []string
	}{
		{"approve", "the flag approves: create_site runs once, outputs are set, the node finishes",
			[]string{"-approve"}, "", false, []string{
				"create_site            DEFERRED APPROVAL_REQUIRED",
				"-- suspended: create_site(",
				"builtin_node_approval  SUCCESS                      the user approved the call of create_site",
				"create_site            SUCCESS",
				`output site_id = "site-1001" (from tool_result c5)`,
				"-- finished after 6 rounds",
				"create_site executed 1 time(s)",
			}},
		{"decline", "the flag declines: the model reads the refusal as a legitimate result and fails the node",
			[]string{"-decline"}, "", false, []string{
				"the user declined the call of create_site: not now",
				"-- failed after 4 rounds (model): the user declined creating the site",
				"create_site executed 0 time(s)",
			}},
		{"zh", "the Chinese catalog reaches the model",
			[]string{"-approve", "-lang", "zh"}, "", false, []string{
				"该写操作 create_site 须经用户确认。下一步：调用 builtin_node_approval",
				"用户已确认 create_site 的调用",
				"-- finished after 6 rounds",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := sitebuilder(t, tt.stdin, tt.interactive, tt.args...)
			require.Equal(t, 0, code, "sitebuilder %v exit code; stderr: %s", tt.args, errOut)
			for _, w := range tt.want {
				assert.Contains(t, out, w, "sitebuilder %v (%s)", tt.args, tt.reason)
			}
			golden(t, tt.name, out)
		})
	}
}

func TestDecisionSources(t *testing.T) {
	tests := []struct {
		name        string
		reason      string
		stdin       string
		interactive bool
		want        string
	}{
		{"not a terminal", "default when stdin is not a terminal: approve", "n\n", false,
			"stdin is not a terminal: approving"},
		{"terminal yes", "a y on the terminal approves", "y\n", true, "-- resuming from the snapshot in a new loop value: approve"},
		{"terminal no", "an n on the terminal declines", "no\n", true, "-- resuming from the snapshot in a new loop value: decline"},
		{"terminal retry", "an unclear answer asks again", "maybe\nY\n", true, "? [y/n] Approve create_site"},
		{"terminal eof", "a closed stdin (such as /dev/null) counts as not a terminal", "", true,
			"no answer on stdin: approving"},
	}
	for _, tt := range tests {
		code, out, errOut := sitebuilder(t, tt.stdin, tt.interactive)
		require.Equal(t, 0, code, "%s: stderr %s", tt.name, errOut)
		assert.Contains(t, out, tt.want, "%s (%s)", tt.name, tt.reason)
	}
}

func TestLogFlagPrintsTheEvents(t *testing.T) {
	code, _, errOut := sitebuilder(t, "", false, "-approve", "-log")
	require.Equal(t, 0, code)
	assert.Contains(t, errOut, `msg="TOOL invoked" outcome=DEFERRED code=APPROVAL_REQUIRED tool=create_site`)
	assert.Contains(t, errOut, `msg="REACT suspended" kind=approval`)
	assert.Contains(t, errOut, `msg="REACT finished"`)
	assert.NotContains(t, errOut, "REACT no_tool_calls", "spec §9 #1: a deferred write is no turn without tool calls")
}

func TestBadFlags(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"both decisions", []string{"-approve", "-decline"}, 2, "exclude each other"},
		{"unknown language", []string{"-lang", "fr"}, 2, `-lang "fr"`},
		{"unknown flag", []string{"-x"}, 2, "flag provided but not defined"},
		{"help", []string{"-h"}, 0, "-approve"},
	}
	for _, tt := range tests {
		code, _, errOut := sitebuilder(t, "", false, tt.args...)
		assert.Equal(t, tt.code, code, "sitebuilder %v exit code", tt.args)
		assert.Contains(t, errOut, tt.stderr, "sitebuilder %v stderr", tt.args)
	}
}

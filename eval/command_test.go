package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/eval"
	"github.com/reactguard/reactguard/react"
	"github.com/reactguard/reactguard/reacttest"
)

func TestCommand(t *testing.T) {
	giveUp := func(context.Context) (react.Model, string, error) {
		return reacttest.Func(func(react.Request) react.Response { return reacttest.Calls(reacttest.FailNode("x", "no")) }), "give-up", nil
	}
	cmd := eval.Command{Name: "rgeval", Models: map[string]eval.ModelFactory{
		"give-up": giveUp,
		"remote": func(context.Context) (react.Model, string, error) {
			return nil, "", eval.Unconfigured("set REMOTE_URL\n")
		},
		"broken": func(context.Context) (react.Model, string, error) { return nil, "", errors.New("bad key") },
	}, Judges: map[string]eval.JudgeFactory{
		"strict": func(context.Context) (eval.Judge, string, error) {
			return judgeFunc(func(eval.JudgeRequest) eval.JudgeVerdict {
				return eval.JudgeVerdict{Supported: false, Unsupported: []string{"shipped with DHL"}, Reason: "the carrier is not in the evidence"}
			}), "strict", nil
		},
		"remote": func(context.Context) (eval.Judge, string, error) {
			return nil, "", eval.Unconfigured("set JUDGE_URL\n")
		},
		"broken": func(context.Context) (eval.Judge, string, error) { return nil, "", errors.New("no key") },
	}}
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join("cases", "integration-01-price.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mine.json"), good, 0o644))
	jsonFile := filepath.Join(t.TempDir(), "report.json")

	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string
		stderr   string
		whyState string
	}{
		{"scripted, strict", []string{"-strict", "-case", "normal-01-order-status,integration-01-price"}, 0, "| **all** | 2 | 2/2 (100.0%)", "", "the scripted set passes"},
		{"strict with a failing model", []string{"-strict", "-model", "give-up", "-category", "normal_success"}, 1, "| **all** | 7 |", "0 of 7 cases passed end to end", "-strict fails the run"},
		{"variants run with the scripted model", []string{"-strict", "-category", "permission_side_effect"}, 0, "## Misbehaving variants", "", "make eval runs them"},
		{"variants off", []string{"-variants=false", "-case", "permission-01-declined-approval"}, 0, "| **all** | 1 |", "", "only the cases"},
		{"unknown judge", []string{"-judge", "gpt", "-case", "normal-01-order-status"}, 2, "", `-judge "gpt": want one of broken, remote, strict`, ""},
		{"judge", []string{"-strict", "-judge", "strict", "-case", "normal-01-order-status"}, 0, "unsupported \"shipped with DHL\"", "", "reported apart; -strict does not count it"},
		{"unconfigured judge", []string{"-judge", "remote"}, 0, "set JUDGE_URL", "", "explains what to set"},
		{"judge that fails to start", []string{"-judge", "broken"}, 3, "", "judge broken: no key", ""},
		{"failing model, not strict", []string{"-model", "give-up", "-category", "normal_success"}, 0, "model give-up", "", "scores are a report, not an error"},
		{"user's directory", []string{"-cases", dir}, 0, "| 6 final integration | 1 |", "", "-cases replaces the set"},
		{"json", []string{"-format", "json", "-case", "normal-01-order-status"}, 0, `"end_to_end": {`, "", "the JSON report on stdout"},
		{"json file", []string{"-json", jsonFile, "-case", "normal-01-order-status"}, 0, "| **all** | 1 |", "", "markdown on stdout, JSON in the file"},
		{"unconfigured model", []string{"-model", "remote"}, 0, "set REMOTE_URL", "", "explains what to set and exits 0"},
		{"model that fails to start", []string{"-model", "broken"}, 3, "", "model broken: bad key", ""},
		{"unknown model", []string{"-model", "gpt"}, 2, "", `-model "gpt": want one of scripted, broken, give-up, remote`, ""},
		{"unknown case", []string{"-case", "nope"}, 2, "", `no case "nope"`, ""},
		{"unknown category", []string{"-category", "nope"}, 2, "", "unknown category", ""},
		{"empty category selection", []string{"-case", "normal-01-order-status", "-category", "business_unmet"}, 2, "", "no case of business_unmet", ""},
		{"bad format", []string{"-format", "xml"}, 2, "", "want markdown or json", ""},
		{"bad language", []string{"-lang", "fr"}, 2, "", "want en or zh", ""},
		{"extra argument", []string{"extra"}, 2, "", "unexpected arguments", ""},
		{"cases that do not load", []string{"-cases", t.TempDir()}, 2, "", "no *.json case", ""},
		{"help", []string{"-h"}, 0, "", "usage: rgeval", ""},
		{"tasks of several steps", []string{"-strict", "-tasks", "-case", "normal-01-order-status"}, 0, "11/11 task cases passed.", "", "the task cases after the cases"},
		{"chinese, verbose", []string{"-lang", "zh", "-v", "-case", "normal-05-follow-up"}, 0, "| **all** | 1 | 1/1", "REACT node_started", "the texts the model sees are Chinese; the loop's events on stderr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := cmd.Run(context.Background(), tt.args, &out, &errb)
			assert.Equal(t, tt.code, code, "exit code; stderr: %s", errb.String())
			assert.Contains(t, out.String(), tt.stdout, tt.whyState)
			assert.Contains(t, errb.String(), tt.stderr)
		})
	}
	var out, errb bytes.Buffer
	require.Zero(t, cmd.Run(context.Background(), []string{"-variants=false", "-case", "permission-01-declined-approval"}, &out, &errb))
	assert.NotContains(t, out.String(), "Misbehaving variants", "-variants=false runs the cases only")
	out.Reset()
	require.Zero(t, cmd.Run(context.Background(), []string{"-model", "give-up", "-case", "permission-01-declined-approval"}, &out, &errb))
	assert.NotContains(t, out.String(), "Misbehaving variants", "variants are scripts: not run for another model")
	b, err := os.ReadFile(jsonFile)
	require.NoError(t, err)
	var rep eval.Report
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, 1, rep.Total.Cases)
}

// judgeFunc is a Judge from a function.
type judgeFunc func(eval.JudgeRequest) eval.JudgeVerdict

func (f judgeFunc) Review(_ context.Context, r eval.JudgeRequest) (eval.JudgeVerdict, error) {
	return f(r), nil
}

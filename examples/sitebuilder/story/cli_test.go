package story_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/examples/sitebuilder/story"
	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/prompt"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name   string
		reason string
		args   []string
		check  func(t *testing.T, cfg story.Config, stderr *bytes.Buffer)
	}{
		{"defaults", "no flags: English, the user decides, no log, five minutes", nil,
			func(t *testing.T, cfg story.Config, _ *bytes.Buffer) {
				assert.Equal(t, story.Config{Lang: prompt.English, Timeout: story.DefaultTimeout}, cfg)
			}},
		{"all", "every flag set", []string{"-approve", "-lang", "zh", "-log", "-timeout", "30s"},
			func(t *testing.T, cfg story.Config, stderr *bytes.Buffer) {
				assert.True(t, cfg.Approve)
				assert.False(t, cfg.Decline)
				assert.Equal(t, prompt.Chinese, cfg.Lang)
				assert.Equal(t, 30*time.Second, cfg.Timeout)
				assert.Same(t, stderr, cfg.Log, "-log writes the events to stderr")
			}},
		{"decline", "decline alone", []string{"-decline"},
			func(t *testing.T, cfg story.Config, _ *bytes.Buffer) { assert.True(t, cfg.Decline) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cfg, err := story.ParseFlags(tt.args, &stderr)
			require.NoError(t, err, "ParseFlags(%q) (%s)", tt.args, tt.reason)
			tt.check(t, cfg, &stderr)
			assert.Empty(t, stderr.String())
		})
	}
}

func TestParseFlagsErrors(t *testing.T) {
	tests := []struct {
		name   string
		reason string
		args   []string
		code   int
		stderr []string
		once   string
	}{
		{"both decisions", "approve and decline exclude each other",
			[]string{"-approve", "-decline"}, 2, []string{"sitebuilder: -approve and -decline exclude each other\n"}, ""},
		{"unknown language", "only en and zh have a catalog",
			[]string{"-lang", "fr"}, 2, []string{`sitebuilder: -lang "fr": want en or zh`}, ""},
		{"unknown flag", "the flag package reports it with the usage, once",
			[]string{"-x"}, 2, []string{"flag provided but not defined: -x", "Usage of sitebuilder:", "-timeout"}, "-x"},
		{"bad duration", "the flag package reports a bad value",
			[]string{"-timeout", "soon"}, 2, []string{`invalid value "soon" for flag -timeout`}, ""},
		{"help", "-h prints the usage and is no failure",
			[]string{"-h"}, 0, []string{"-approve", "-decline", "-lang", "-log"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			_, err := story.ParseFlags(tt.args, &stderr)
			require.Error(t, err, "ParseFlags(%q) (%s)", tt.args, tt.reason)
			assert.Equal(t, tt.code, story.Exit(&stderr, err), "Exit(ParseFlags(%q))", tt.args)
			for _, w := range tt.stderr {
				assert.Contains(t, stderr.String(), w, "stderr of %q (%s)", tt.args, tt.reason)
			}
			if tt.once != "" {
				assert.Equal(t, 1, bytes.Count(stderr.Bytes(), []byte(tt.once)), "stderr of %q names %s once: %s", tt.args, tt.once, stderr.String())
			}
		})
	}
}

func TestExit(t *testing.T) {
	rateLimited := &modelerr.Error{Provider: "fake", Kind: modelerr.RateLimited}
	tests := []struct {
		name   string
		reason string
		err    error
		code   int
		stderr string
	}{
		{"nil", "success", nil, 0, ""},
		{"help", "-h is no failure", flag.ErrHelp, 0, ""},
		{"wrapped help", "found with errors.Is", fmt.Errorf("parse: %w", flag.ErrHelp), 0, ""},
		{"other", "any other error fails with 1", errors.New("boom"), 1, "sitebuilder: boom\n"},
		{"model", "a model error is explained",
			fmt.Errorf("react: model: %w", rateLimited), 1,
			"sitebuilder: react: model: fake: rate_limited\nsitebuilder: the model failed (rate_limited, retryable: true); the run's snapshot could be resumed later\n"},
		{"auth", "a model error that retrying does not fix",
			&modelerr.Error{Kind: modelerr.Auth}, 1,
			"sitebuilder: model: auth\nsitebuilder: the model failed (auth, retryable: false); the run's snapshot could be resumed later\n"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		assert.Equal(t, tt.code, story.Exit(&stderr, tt.err), "Exit(%v) (%s)", tt.err, tt.reason)
		assert.Equal(t, tt.stderr, stderr.String(), "Exit(%v) stderr (%s)", tt.err, tt.reason)
	}
}

func TestSynopsisNamesEveryFlag(t *testing.T) {
	var usage bytes.Buffer
	_, err := story.ParseFlags([]string{"-h"}, &usage)
	require.ErrorIs(t, err, flag.ErrHelp)
	flags := 0
	for _, line := range bytes.Split(usage.Bytes(), []byte("\n")) {
		if name, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("-")); ok {
			name, _, _ = bytes.Cut(name, []byte(" "))
			assert.Contains(t, story.Synopsis, "-"+string(name), "Synopsis lacks a flag of ParseFlags")
			flags++
		}
	}
	assert.Equal(t, 5, flags, "flags in the usage of ParseFlags:\n%s", usage.String())
}

// A program defines its own flags next to the shared ones.
func TestParseFlagsWith(t *testing.T) {
	var spans bool
	cfg, err := story.ParseFlagsWith([]string{"-spans", "-approve"}, &bytes.Buffer{}, func(fs *flag.FlagSet) {
		fs.BoolVar(&spans, "spans", false, "print spans")
	})
	require.NoError(t, err)
	assert.True(t, spans, "the program's flag is parsed")
	assert.True(t, cfg.Approve, "the shared flags still are")
	_, err = story.ParseFlags([]string{"-spans"}, &bytes.Buffer{})
	assert.Error(t, err, "without the definition the flag is unknown")
}

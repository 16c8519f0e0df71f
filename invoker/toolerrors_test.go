package invoker_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/invoker"
	"github.com/reactguard/reactguard/prompt"
)

func TestDefaultNext(t *testing.T) {
	cases := []struct {
		code   errcode.Code
		reason string
		want   prompt.Key
	}{
		{errcode.ToolTimeout, "the effect is unknown; the tool may be slow", prompt.NextTimeout},
		{errcode.ToolUnreachable, "the tool is down", prompt.NextUnreachable},
		{errcode.ToolUnavailable, "the runtime retries where allowed", prompt.NextRetryLater},
		{errcode.ToolRateLimited, "the runtime retries where allowed", prompt.NextRetryLater},
		{errcode.ToolForbidden, "do not probe", prompt.NextForbidden},
		{errcode.ToolNotFound, "check the identifier", prompt.NextNotFound},
		{errcode.ToolBusinessFailed, "tell the user (§7.2: NEXT_BUSINESS)", prompt.NextBusiness},
		{errcode.MCPInvalidParams, "fix the parameters", prompt.NextMCPInvalidParams},
		{errcode.ToolResultEmpty, "refine or report nothing found", prompt.NextEmpty},
		{errcode.ToolResultInvalid, "do not rely on the result", prompt.NextResultInvalid},
		{errcode.ToolResultTooLarge, "ask for less", prompt.NextTooLarge},
		{errcode.ArgJSONInvalid, "resend one JSON object", prompt.NextFixJSON},
		{errcode.CatalogDenied, "call an offered tool", prompt.NextCatalogOffered},
		{errcode.ToolError, "anything else", prompt.NextToolError},
		{errcode.MCPToolError, "anything else", prompt.NextToolError},
		{errcode.ToolIOError, "anything else", prompt.NextToolError},
		{errcode.MCPRPCError, "anything else", prompt.NextToolError},
	}
	for _, tc := range cases {
		got := invoker.DefaultNext(tc.code)
		assert.Equalf(t, tc.want, got, "DefaultNext(%v) = %v; want %v (%s)", tc.code, got, tc.want, tc.reason)
	}
	// Every code has a default that renders, in both languages, with no
	// placeholder left once {tool} is filled.
	var nilTable *invoker.ToolErrors
	for _, c := range errcode.All() {
		k := invoker.DefaultNext(c)
		assert.Truef(t, k.IsValid(), "DefaultNext(%v) = %v is not a catalog key", c, k)
		for _, cat := range []*prompt.Catalog{prompt.For(prompt.English), prompt.For(prompt.Chinese)} {
			n := nilTable.Next(cat, "t", c)
			assert.NotEmptyf(t, n, "Next(%v, %v) is empty", cat.Lang(), c)
			assert.NotContainsf(t, n, "{", "Next(%v, %v) = %q leaves a placeholder", cat.Lang(), c, n)
		}
	}
}

func TestToolErrorsLookup(t *testing.T) {
	en := prompt.For(prompt.English)
	zh := prompt.For(prompt.Chinese)
	var zero invoker.ToolErrors
	assert.Equal(t, invoker.NextKey(prompt.NextTimeout), zero.Lookup("x", errcode.ToolTimeout), "the zero table is the default table")

	errs := new(invoker.ToolErrors).
		Set(errcode.ToolTimeout, invoker.NextText("wait for {tool} and try once more")).
		Set(errcode.ToolForbidden, invoker.NextKey(prompt.NextToolError)).
		SetFor("pay", errcode.ToolTimeout, invoker.NextKey(prompt.NextWritePendingVerify)).
		SetFor("pay", errcode.ToolTimeout, invoker.NextKey(prompt.NextUnreachable)) // the last one wins
	cases := []struct {
		name   string
		reason string
		cat    *prompt.Catalog
		tool   string
		code   errcode.Code
		want   string
	}{
		{"literal per code", "a literal text, {tool} filled", en, "search", errcode.ToolTimeout, "wait for search and try once more"},
		{"literal in Chinese", "a literal text is the same in every language", zh, "search", errcode.ToolTimeout, "wait for search and try once more"},
		{"key per code", "a catalog key", en, "search", errcode.ToolForbidden, en.Text(prompt.NextToolError)},
		{"key per code in Chinese", "a catalog key renders in the catalog's language", zh, "search", errcode.ToolForbidden, zh.Text(prompt.NextToolError)},
		{"per tool", "a (tool, code) entry beats the code entry; the last SetFor wins", en, "pay", errcode.ToolTimeout, en.Text(prompt.NextUnreachable)},
		{"per tool other code", "a tool entry covers only its code", en, "pay", errcode.ToolForbidden, en.Text(prompt.NextToolError)},
		{"unconfigured code", "defaults stay", zh, "pay", errcode.ToolNotFound, zh.Text(prompt.NextNotFound)},
		{"nil catalog", "nil is English", nil, "search", errcode.ToolNotFound, en.Text(prompt.NextNotFound)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := errs.Next(tc.cat, tc.tool, tc.code)
			assert.Equalf(t, tc.want, got, "Next(%s, %v) = %q; want %q (%s)", tc.tool, tc.code, got, tc.want, tc.reason)
		})
	}
}

func TestToolErrorsConcurrentReads(t *testing.T) {
	errs := new(invoker.ToolErrors).Set(errcode.ToolTimeout, invoker.NextText("x")).SetFor("a", errcode.ToolTimeout, invoker.NextText("y"))
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			assert.Equal(t, "y", errs.Next(nil, "a", errcode.ToolTimeout))
			assert.Equal(t, "x", errs.Next(nil, "b", errcode.ToolTimeout))
		})
	}
	wg.Wait()
}

func TestStep(t *testing.T) {
	k := invoker.NextKey(prompt.NextBusiness)
	assert.Equal(t, prompt.NextBusiness, k.Key())
	assert.Empty(t, k.Text())
	assert.False(t, k.IsZero())
	s := invoker.NextText("literal {tool}")
	assert.Equal(t, prompt.Key(0), s.Key())
	assert.Equal(t, "literal {tool}", s.Text())
	assert.Equal(t, "literal t", s.Render(nil, "t"))
	var zero invoker.Step
	assert.True(t, zero.IsZero())
	assert.Empty(t, zero.Render(nil, "t"), "the zero Step renders empty")
}

func TestToolErrorsPanics(t *testing.T) {
	cases := []struct {
		name   string
		reason string
		fn     func()
	}{
		{"NextKey undefined", "a key that names no text", func() { invoker.NextKey(prompt.Key(9999)) }},
		{"NextKey zero", "the zero key names nothing", func() { invoker.NextKey(0) }},
		{"NextText empty", "a next step must say something", func() { invoker.NextText("") }},
		{"Set undefined code", "only defined codes", func() { new(invoker.ToolErrors).Set(0, invoker.NextText("x")) }},
		{"Set zero step", "the zero Step is empty", func() { new(invoker.ToolErrors).Set(errcode.ToolTimeout, invoker.Step{}) }},
		{"SetFor empty tool", "a tool entry needs a tool", func() { new(invoker.ToolErrors).SetFor("", errcode.ToolTimeout, invoker.NextText("x")) }},
		{"SetFor undefined code", "only defined codes", func() { new(invoker.ToolErrors).SetFor("a", 7, invoker.NextText("x")) }},
		{"SetFor zero step", "the zero Step is empty", func() { new(invoker.ToolErrors).SetFor("a", errcode.ToolTimeout, invoker.Step{}) }},
	}
	for _, tc := range cases {
		assert.Panicsf(t, tc.fn, "%s must panic (%s)", tc.name, tc.reason)
	}
}

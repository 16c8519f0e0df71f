package prompt_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/prompt"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var langs = []prompt.Lang{prompt.English, prompt.Chinese}

// Every key is in every catalog, with the same placeholders.
func TestCatalogParity(t *testing.T) {
	en, zh := prompt.For(prompt.English), prompt.For(prompt.Chinese)
	for _, k := range prompt.Keys() {
		enT, ok := en.Raw(k)
		assert.True(t, ok, "%v missing from the English catalog", k)
		zhT, ok := zh.Raw(k)
		assert.True(t, ok, "%v missing from the Chinese catalog", k)
		a, b := prompt.Placeholders(enT), prompt.Placeholders(zhT)
		slices.Sort(a)
		slices.Sort(b)
		assert.Equal(t, a, b, "%v: both catalogs use the same placeholders", k)
		assert.NotContains(t, k.String(), "KEY(", "%d has a name", k)
	}
	for _, c := range errcode.All() {
		zhT, ok := prompt.ChineseReasons[c]
		assert.True(t, ok, "%v has no Chinese reason", c)
		a, b := prompt.Placeholders(c.Template()), prompt.Placeholders(zhT)
		slices.Sort(a)
		slices.Sort(b)
		assert.Equal(t, a, b, "%v: reason placeholders match", c)
	}
	assert.Len(t, prompt.ChineseReasons, len(errcode.All()), "no Chinese reason for an undefined code")
}

// advice lists, per language, words that only advice uses: a reason that
// holds one of them advises.
var advice = map[prompt.Lang][]string{
	prompt.English: {"call builtin", "please", "try ", "should", "next:", "do not", "don't", "instead", "you may"},
	prompt.Chinese: {"调用 builtin", "请先", "请调用", "请使用", "应该", "应当", "不要", "下一步", "尝试", "重试", "建议", "务必", "可以", "改用"},
}

// Reasons state what happened; next steps advise. §7.2: "ModelHint 的原因文案只写发生了什么；
// 处理建议一律放在 NEXT_*". Every reason text of both catalogs (REASON_*,
// DETAIL_* and the reason of every error code) is checked.
func TestReasonsNeverAdvise(t *testing.T) {
	for _, l := range langs {
		c := prompt.For(l)
		texts := map[string]string{}
		for _, k := range prompt.Keys() {
			if name := k.String(); strings.HasPrefix(name, "REASON_") || strings.HasPrefix(name, "DETAIL_") {
				texts[name], _ = c.Raw(k)
			}
		}
		for _, code := range errcode.All() {
			texts[code.String()] = c.Reason(code)
		}
		for name, txt := range texts {
			low := strings.ToLower(txt)
			for _, a := range advice[l] {
				assert.NotContainsf(t, low, a, "%v reason %s = %q advises (%q)", l, name, txt, a)
			}
		}
	}
}

// The advice words do find advice: every next step of both catalogs holds
// at least one, so the check above is not vacuous.
func TestAdviceWordsFindAdvice(t *testing.T) {
	for _, l := range langs {
		c := prompt.For(l)
		for _, k := range prompt.Keys() {
			if !strings.HasPrefix(k.String(), "NEXT_") {
				continue
			}
			txt, _ := c.Raw(k)
			low := strings.ToLower(txt)
			found := slices.ContainsFunc(advice[l], func(a string) bool { return strings.Contains(low, a) })
			if !found && !adviceByVerb(l, low) {
				t.Errorf("%v %v = %q holds none of the advice words", l, k, txt)
			}
		}
	}
}

// adviceByVerb recognises next steps that advise with a plain imperative
// ("call X", "wait", "check", "调用 X", "等待") rather than one of the
// advice words.
func adviceByVerb(l prompt.Lang, low string) bool {
	verbs := []string{"use ", "call ", "wait ", "check ", "correct ", "take ", "send ", "choose ", "refine ", "copy ", "set ", "answer ", "continue ", "ask ", "tell "}
	if l == prompt.Chinese {
		verbs = []string{"调用", "等待", "修正", "按", "先", "使用", "只使用", "重新", "把", "用 ", "为 ", "对照", "改写", "如仍需要", "直接", "只调用", "继续", "以工具调用"}
	}
	return slices.ContainsFunc(verbs, func(v string) bool { return strings.HasPrefix(low, v) || strings.Contains(low, "再"+v) })
}

// Scenario 9 of §9: no prompt ever tells the model to "write outputs".
func TestNoTextSaysWriteOutputs(t *testing.T) {
	for _, l := range langs {
		c := prompt.For(l)
		for _, k := range prompt.Keys() {
			txt, _ := c.Raw(k)
			low := strings.ToLower(txt)
			assert.NotContains(t, low, "write outputs", "%v/%v", l, k)
			assert.NotContains(t, low, "写 outputs", "%v/%v", l, k)
			assert.NotContains(t, low, "写outputs", "%v/%v", l, k)
		}
	}
}

func TestSystemRulesCoverSpec(t *testing.T) {
	// §7.3: follow the text after "Next:", do not retry with varied
	// arguments, call a write tool directly and request approval only
	// after it was stopped.
	en := prompt.For(prompt.English).Text(prompt.SystemRules)
	for _, want := range []string{`"Next:"`, "Do not retry the same tool with varied arguments", "Call a write tool directly", "builtin_node_approval"} {
		assert.Contains(t, en, want)
	}
	zh := prompt.For(prompt.Chinese).Text(prompt.SystemRules)
	for _, want := range []string{`"下一步："`, "不要换参数反复重试", "写工具先直接调用", "builtin_node_approval"} {
		assert.Contains(t, zh, want)
	}
}

func TestPhaseHint(t *testing.T) {
	written := func(keys ...string) func(string) bool {
		return func(k string) bool { return slices.Contains(keys, k) }
	}
	tests := []struct {
		name     string
		lang     prompt.Lang
		required []string
		written  func(string) bool
		want     string
		reason   string
	}{
		{"nothing required", prompt.English, nil, nil, "", "§7.4: no hint when the contract requires nothing"},
		{"nothing required, outputs written", prompt.English, []string{}, written("site"), "", "optional outputs never produce a hint"},
		{"all missing", prompt.English, []string{"site_id", "url"}, written(), "Required outputs not yet set: site_id, url.", "lists the keys not yet written"},
		{"nil written func", prompt.English, []string{"site_id"}, nil, "Required outputs not yet set: site_id.", "nil means nothing written"},
		{"some missing", prompt.English, []string{"site_id", "url"}, written("site_id"), "Required outputs not yet set: url.", "only what is missing"},
		{"all written", prompt.English, []string{"site_id", "url"}, written("site_id", "url"), "All required outputs are set: site_id, url.", "states the fact, guesses nothing"},
		{"chinese missing", prompt.Chinese, []string{"site_id", "url"}, written("url"), "尚未写入的必填产出：site_id。", "Chinese wording"},
		{"chinese written", prompt.Chinese, []string{"a", "b"}, written("a", "b"), "必填产出已写齐：a、b。", "Chinese list separator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := prompt.For(tt.lang).PhaseHint(tt.required, tt.written)
			assert.Equal(t, tt.want, got, "PhaseHint(%v): %s", tt.required, tt.reason)
		})
	}
}

func TestFill(t *testing.T) {
	tests := []struct {
		name, tmpl string
		kv         []string
		want       string
	}{
		{"simple", "call {tool} now", []string{"tool", "x"}, "call x now"},
		{"repeated", "{a}-{a}", []string{"a", "1"}, "1-1"},
		{"missing value kept", "{a} {b}", []string{"a", "1"}, "1 {b}"},
		{"no kv", "{a}", nil, "{a}"},
		{"odd kv ignored", "{a}{b}", []string{"a", "1", "b"}, "1{b}"},
		{"values not re-expanded", "{a}", []string{"a", "{b}", "b", "2"}, "{b}"},
		{"unclosed brace", "x {a", []string{"a", "1"}, "x {a"},
		{"no braces", "plain", []string{"a", "1"}, "plain"},
		{"unicode", "用户回答：{answer}", []string{"answer", "是"}, "用户回答：是"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, prompt.Fill(tt.tmpl, tt.kv...), "Fill(%q, %q)", tt.tmpl, tt.kv)
	}
	assert.Equal(t, []string{"a", "b"}, prompt.Placeholders("{a} {b} {a} {c"))
	assert.Nil(t, prompt.Placeholders("none"))
}

func TestLookupsAndFallbacks(t *testing.T) {
	assert.Equal(t, prompt.English, prompt.For(0).Lang(), "an invalid language falls back to English")
	var nilCat *prompt.Catalog
	assert.Equal(t, prompt.English, nilCat.Lang())
	assert.Equal(t, prompt.Default().Text(prompt.NextCallTool), nilCat.Text(prompt.NextCallTool))
	assert.Equal(t, "x. Next: y", nilCat.Message("x", "y"))
	assert.Equal(t, "reason only", prompt.Default().Message("reason only", ""))
	assert.Equal(t, prompt.Default().Reason(errcode.ToolError, "tool", "t"), nilCat.Reason(errcode.ToolError, "tool", "t"))
	assert.Equal(t, "KEY(9999)", prompt.Default().Text(9999), "an unknown key renders visibly")
	assert.False(t, prompt.Key(9999).IsValid())
	assert.True(t, prompt.NextApproval.IsValid())
	assert.Equal(t, "CODE(7)", prompt.For(prompt.Chinese).Reason(7), "an undefined code renders visibly")
	assert.Equal(t, "CODE(7)", prompt.Default().Reason(7))
	assert.Equal(t, "业务失败 [system.50001]：额度不足",
		prompt.For(prompt.Chinese).Reason(errcode.ToolBusinessFailed, "code", "system.50001", "detail", "额度不足"))
}

func TestLangText(t *testing.T) {
	for _, l := range langs {
		b, err := l.MarshalText()
		require.NoError(t, err)
		var back prompt.Lang
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, l, back)
	}
	var zero prompt.Lang
	assert.False(t, zero.IsValid())
	assert.Equal(t, "lang(0)", zero.String())
	_, err := zero.MarshalText()
	assert.Error(t, err)
	l := prompt.Chinese
	assert.Error(t, l.UnmarshalText([]byte("fr")))
	assert.Equal(t, prompt.Chinese, l, "unchanged on error")
}

// sample values for every placeholder, so golden files show rendered text.
var sample = []string{
	"tool", "create_site", "gated", "create_site", "tools", "list_websites, list_spaces",
	"field", "space_id", "expect", "a string", "param", "space_id", "source", "list_spaces",
	"count", "2", "gist", "SUCCESS 2 spaces", "code", "system.50001", "detail", "quota exceeded",
	"answer", "the blue theme", "key", "site_url", "keys", "site_url, site_id", "sources", "tool_result, user",
	"ref", "call_7", "kept", "4096", "total", "90000", "max", "256", "reason", "REASON", "next", "NEXT",
	"timeout", "5s", "by", "builtin_node_finish", "type", "integer", "count", "3",
	"summary", "SUMMARY", "outputs", "order_id (string, required): the order",
	"status", "STATUS", "retry", "RETRY", "age", "2h0m0s", "cursor", `"p2"`, "job", "job-7", "poll", "job_status",
	"wall", "WALL", "step", "search", "value", "ord-9", "text", "the hotel is not booked", "values", `{"hotel_id":"h-1"}`,
	"rubric", "RUBRIC", "task", "TASK", "evidence", "EVIDENCE",
}

// TestGolden pins every rendered text of both catalogs; go test -update
// rewrites testdata/*.golden. Texts are API: review every diff.
func TestGolden(t *testing.T) {
	for _, l := range langs {
		t.Run(l.String(), func(t *testing.T) {
			c := prompt.For(l)
			var b bytes.Buffer
			for _, k := range prompt.Keys() {
				fmt.Fprintf(&b, "== %s\n%s\n", k, c.Text(k, sample...))
			}
			for _, code := range errcode.All() {
				fmt.Fprintf(&b, "== %s\n%s\n", code, c.Reason(code, sample...))
			}
			path := filepath.Join("testdata", l.String()+".golden")
			if *update {
				require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./prompt -update")
			assert.Equal(t, string(want), b.String(), "%s is stale; run go test ./prompt -update and review the diff", path)
		})
	}
}

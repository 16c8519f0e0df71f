package errcode_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reactguard/reactguard/errcode"
)

var update = flag.Bool("update", false, "rewrite docs/errcodes.md")

// specCodes are the names the specification and seed 003 require (issue 2).
var specCodes = []string{
	// §5
	"TOOL_TIMEOUT", "TOOL_UNREACHABLE", "TOOL_IO_ERROR", "MCP_RPC_ERROR", "MCP_INVALID_PARAMS",
	"TOOL_ERROR", "MCP_TOOL_ERROR", "TOOL_BUSINESS_FAILED", "ARG_JSON_INVALID", "ARG_REJECTED",
	"PARAM_PROVENANCE_MISMATCH", "PARAM_PROVENANCE_QUERY_FIRST", "PARAM_PROVENANCE_FOLLOW_UP_FIRST",
	"PARAM_PROVENANCE_REJECTED", "FINGERPRINT_TRIP", "APPROVAL_REQUIRED", "WRITE_PENDING_VERIFY",
	"WRITE_IN_FLIGHT", "CATALOG_DENIED",
	// §7.3 and §9
	"APPROVAL_NOT_GATED", "APPROVAL_TOOL_MISMATCH", "FOLLOW_UP_ANSWERED", "FOLLOW_UP_UNGROUNDED",
	"OUTPUT_KEY_UNDECLARED", "OUTPUT_SOURCE_TYPE_MISSING", "OUTPUT_SOURCE_TYPE_NOT_ACCEPTED",
	"OUTPUT_SOURCE_REF_MISSING", "OUTPUT_VALUE_MISMATCH", "FINISH_OUTPUTS_MISSING",
	// seed 003 execution classes
	"TOOL_FORBIDDEN", "TOOL_NOT_FOUND", "TOOL_UNAVAILABLE", "TOOL_RATE_LIMITED", "TOOL_RESULT_INVALID",
}

func TestSpecCodesExist(t *testing.T) {
	for _, name := range specCodes {
		_, err := errcode.Parse(name)
		assert.NoError(t, err, "the specification names %s", name)
	}
	assert.Equal(t, errcode.Code(42246), errcode.ApprovalToolMismatch, "the specification fixes APPROVAL_TOOL_MISMATCH = 42246")
}

// Completeness: every code has a name, a layer, a template, a unique id in
// the documented scheme, and its text form round-trips.
func TestEveryCode(t *testing.T) {
	nameRE := regexp.MustCompile(`^[A-Z][A-Z0-9_]+$`)
	names := map[string]bool{}
	for _, c := range errcode.All() {
		t.Run(c.String(), func(t *testing.T) {
			assert.True(t, c.IsValid())
			assert.Regexp(t, nameRE, c.String(), "no fallback name")
			assert.False(t, names[c.String()], "names are unique")
			names[c.String()] = true
			assert.True(t, c.Layer().IsValid(), "every code has a layer")
			assert.True(t, c.Class().IsValid(), "class is defined")
			assert.NotEmpty(t, c.Template(), "every code has a reason template")
			assert.Equal(t, uint32(c), c.ID())
			// Scheme: S*100+n with S a three-digit HTTP status and n in 01..99.
			status, n := c.ID()/100, c.ID()%100
			assert.True(t, status >= 200 && status <= 599 && n >= 1, "id %d follows S*100+n", c.ID())
			// Templates state what happened; advice lives in next steps.
			lower := strings.ToLower(c.Template())
			for _, advice := range []string{"please", "try ", "call builtin", "you should", "next:"} {
				assert.NotContains(t, lower, advice, "templates never advise")
			}
			back, err := errcode.Parse(c.String())
			require.NoError(t, err)
			assert.Equal(t, c, back)
			b, err := json.Marshal(c)
			require.NoError(t, err)
			var fromJSON errcode.Code
			require.NoError(t, json.Unmarshal(b, &fromJSON))
			assert.Equal(t, c, fromJSON)
			// Only temporarily-unavailable is retryable by default.
			assert.Equal(t, c.Class() == errcode.ClassTemporarilyUnavailable, c.Retryable())
			// Codes decided before execution have no execution status.
			if c.Layer() == errcode.LayerCall && c != errcode.ArgJSONInvalid && c != errcode.ArgRejected && c != errcode.ToolCallInvalid && c != errcode.ToolCallCutOff {
				assert.Equal(t, errcode.ClassNone, c.Class())
			}
		})
	}
}

// Ids are stable API: this table pins every id ever assigned. A new code
// adds a row; no row may change or disappear (a retired code keeps its id).
func TestIDsArePinned(t *testing.T) {
	pinned := map[string]uint32{
		"ARG_JSON_INVALID": 40001, "ARG_REJECTED": 40002, "TOOL_CALL_INVALID": 40003, "MCP_INVALID_PARAMS": 40004, "TOOL_CALL_CUT_OFF": 40005,
		"TOOL_FORBIDDEN": 40301, "CATALOG_DENIED": 40401, "TOOL_NOT_FOUND": 40402, "WRITE_IN_FLIGHT": 40901,
		"TOOL_BUSINESS_FAILED": 42201, "PARAM_PROVENANCE_MISMATCH": 42211, "PARAM_PROVENANCE_QUERY_FIRST": 42212,
		"PARAM_PROVENANCE_FOLLOW_UP_FIRST": 42213, "PARAM_PROVENANCE_REJECTED": 42214,
		"APPROVAL_NOT_GATED": 42245, "APPROVAL_TOOL_MISMATCH": 42246, "FOLLOW_UP_ANSWERED": 42247,
		"FOLLOW_UP_UNGROUNDED": 42248, "OUTPUT_KEY_UNDECLARED": 42250, "OUTPUT_SOURCE_TYPE_MISSING": 42251,
		"OUTPUT_SOURCE_TYPE_NOT_ACCEPTED": 42252, "OUTPUT_SOURCE_REF_MISSING": 42253, "OUTPUT_SOURCE_REF_UNKNOWN": 42254,
		"OUTPUT_VALUE_MISMATCH": 42255, "FINISH_OUTPUTS_MISSING": 42256, "OUTPUT_VALUE_INVALID": 42260,
		"TOOL_BLOCKED": 42270, "PARAM_PROVENANCE_STEP_MISSING": 42271, "STEP_NOT_SATISFIED": 42272,
		"ANSWER_CLAIMS_UNVERIFIED": 42273, "ANSWER_OMITS_MISSING": 42274,
		"APPROVAL_REQUIRED": 42801, "WRITE_PENDING_VERIFY": 42802, "FINGERPRINT_TRIP": 42901, "TOOL_RATE_LIMITED": 42902,
		"TOOL_RESULT_EMPTY": 20401, "TOOL_ERROR": 50001, "MCP_TOOL_ERROR": 50002, "TOOL_UNREACHABLE": 50201,
		"TOOL_IO_ERROR": 50202, "MCP_RPC_ERROR": 50203, "TOOL_RESULT_INVALID": 50204, "TOOL_UNAVAILABLE": 50301,
		"TOOL_TIMEOUT": 50401, "TOOL_RESULT_TOO_LARGE": 41301,
	}
	for name, id := range pinned {
		c, err := errcode.Parse(name)
		if assert.NoError(t, err, "pinned code %s disappeared", name) {
			assert.Equal(t, id, c.ID(), "id of %s changed", name)
		}
	}
	assert.Len(t, errcode.All(), len(pinned), "a new code needs a pinned row")
}

func TestRetryDefaults(t *testing.T) {
	tests := []struct {
		code   errcode.Code
		retry  bool
		reason string
	}{
		{errcode.ToolUnavailable, true, "temporarily unavailable is the retryable class"},
		{errcode.ToolRateLimited, true, "rate limiting is temporary unavailability"},
		{errcode.ToolUnreachable, true, "an unreachable backend is unavailable (gRPC UNAVAILABLE); writes are still gated by idempotency keys"},
		{errcode.ToolTimeout, false, "a timed-out write may have taken effect: verify, never blindly retry"},
		{errcode.ToolResultTooLarge, false, "the same request gives the same too large result: ask for less"},
		{errcode.ToolForbidden, false, "retrying a permission refusal is probing"},
		{errcode.ToolBusinessFailed, false, "the service answered; repeating it changes nothing"},
		{errcode.ArgRejected, false, "the model must fix the call, not the runtime repeat it"},
		{errcode.ApprovalRequired, false, "deferred calls wait for a step"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.retry, tt.code.Retryable(), "%v.Retryable(): %s", tt.code, tt.reason)
	}
}

func TestUndefined(t *testing.T) {
	var zero errcode.Code
	for _, c := range []errcode.Code{zero, 1, 42299, 99999} {
		assert.False(t, c.IsValid())
		assert.Equal(t, fmt.Sprintf("CODE(%d)", c), c.String())
		assert.Equal(t, errcode.Layer(0), c.Layer())
		assert.Equal(t, errcode.ClassNone, c.Class())
		assert.Empty(t, c.Template())
		assert.False(t, c.Retryable())
		_, err := c.MarshalText()
		assert.Error(t, err)
	}
	c := errcode.ToolError
	assert.Error(t, c.UnmarshalText([]byte("NOPE")))
	assert.Equal(t, errcode.ToolError, c, "unchanged on error")
	assert.Error(t, json.Unmarshal([]byte(`"tool_error"`), &c), "names are case-sensitive")
}

func TestLayerAndClassText(t *testing.T) {
	for l := errcode.LayerCall; l <= errcode.LayerBusiness; l++ {
		b, err := l.MarshalText()
		require.NoError(t, err)
		var back errcode.Layer
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, l, back)
	}
	var l errcode.Layer
	_, err := l.MarshalText()
	assert.Error(t, err, "the zero layer is invalid")
	assert.Equal(t, "layer(0)", l.String())
	assert.Error(t, l.UnmarshalText([]byte("transport")))

	for c := errcode.ClassNone; c <= errcode.ClassEmpty; c++ {
		b, err := c.MarshalText()
		require.NoError(t, err)
		var back errcode.Class
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, c, back)
	}
	bad := errcode.Class(200)
	assert.False(t, bad.IsValid())
	assert.Equal(t, "class(200)", bad.String())
	_, err = bad.MarshalText()
	assert.Error(t, err)
	var c errcode.Class
	assert.Error(t, c.UnmarshalText([]byte("flaky")))
	assert.Equal(t, "temporarily_unavailable", errcode.ClassTemporarilyUnavailable.String())
}

func TestAllIsSortedCopy(t *testing.T) {
	all := errcode.All()
	for i := 1; i < len(all); i++ {
		assert.Less(t, all[i-1], all[i])
	}
	all[0] = 0
	assert.NotZero(t, errcode.All()[0])
}

// TestErrcodesDoc fails when docs/errcodes.md is stale; go generate (or
// go test -run TestErrcodesDoc -update) rewrites it.
func TestErrcodesDoc(t *testing.T) {
	path := filepath.Join("..", "docs", "errcodes.md")
	want := renderDoc()
	if *update {
		require.NoError(t, os.WriteFile(path, want, 0o644))
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err, "run go generate ./errcode")
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale; run go generate ./errcode", path)
	}
}

func renderDoc() []byte {
	var b bytes.Buffer
	b.WriteString("# Error codes\n\n")
	b.WriteString("<!-- Generated by go generate ./errcode from errcode/code.go. DO NOT EDIT. -->\n\n")
	b.WriteString("Every non-success observation carries one of these codes. Ids follow the scheme\n")
	b.WriteString("S*100+n (S: the HTTP status that best describes the situation; n: the code's number\n")
	b.WriteString("within it) and are never reused. APPROVAL_TOOL_MISMATCH = 42246 is fixed by the\n")
	b.WriteString("specification. Only the temporarily_unavailable class is retryable by default.\n")
	b.WriteString("Reason templates state what happened; `{name}` placeholders are filled at run time.\n\n")
	for _, layer := range []errcode.Layer{errcode.LayerCall, errcode.LayerExecution, errcode.LayerBusiness} {
		fmt.Fprintf(&b, "## %s layer\n\n", layer)
		b.WriteString("| id | name | class | retry | reason template |\n|---:|---|---|---|---|\n")
		for _, c := range errcode.All() {
			if c.Layer() != layer {
				continue
			}
			retry := "no"
			if c.Retryable() {
				retry = "yes"
			}
			fmt.Fprintf(&b, "| %d | `%s` | %s | %s | %s |\n", c.ID(), c, c.Class(), retry,
				strings.ReplaceAll(c.Template(), "|", `\|`))
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

func FuzzParse(f *testing.F) {
	for _, c := range errcode.All() {
		f.Add(c.String())
	}
	f.Add("")
	f.Add("CODE(1)")
	f.Fuzz(func(t *testing.T, s string) {
		var c errcode.Code
		if err := c.UnmarshalText([]byte(s)); err != nil {
			if c != 0 {
				t.Fatalf("UnmarshalText(%q) changed the value on error", s)
			}
			return
		}
		b, err := c.MarshalText()
		if err != nil || string(b) != s {
			t.Fatalf("round trip of %q = %q, %v", s, b, err)
		}
		var again errcode.Code
		if err := again.UnmarshalText(b); err != nil || again != c {
			t.Fatalf("decode again of %q = %v, %v; want %v", b, again, err, c)
		}
	})
}

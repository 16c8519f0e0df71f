package invoker

import (
	"fmt"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/prompt"
)

// Step is one next step of the [ToolErrors] table: either a catalog key,
// rendered in the loop's language, or a literal text. Build it with
// [NextKey] or [NextText]; the zero Step is empty and cannot be configured.
type Step struct {
	key  prompt.Key
	text string
}

// NextKey returns a step rendered from the catalog text under k, with {tool}
// filled with the tool's name. It panics if k names no text (a programming
// error).
func NextKey(k prompt.Key) Step {
	if !k.IsValid() {
		panic(fmt.Sprintf("invoker.NextKey: undefined key %v", k))
	}
	return Step{key: k}
}

// NextText returns a step that is the literal text s in every language,
// with {tool} filled with the tool's name. It panics if s is empty: a next
// step must say something.
func NextText(s string) Step {
	if s == "" {
		panic("invoker.NextText: empty next step")
	}
	return Step{text: s}
}

// Key returns the step's catalog key, or 0 for a literal text.
func (s Step) Key() prompt.Key { return s.key }

// Text returns the step's literal text, or "" for a catalog key.
func (s Step) Text() string { return s.text }

// IsZero reports whether s is the zero Step.
func (s Step) IsZero() bool { return s.key == 0 && s.text == "" }

// Render returns the step in catalog cat (nil: English) for the tool named
// toolName. The zero Step renders as "".
func (s Step) Render(cat *prompt.Catalog, toolName string) string {
	if s.text != "" {
		return prompt.Fill(s.text, "tool", toolName)
	}
	if s.key == 0 {
		return ""
	}
	return cat.Text(s.key, "tool", toolName)
}

// DefaultNext returns the default next step of code (specification §7.2,
// ToolErrors):
//
//	TOOL_TIMEOUT                        NEXT_TIMEOUT
//	TOOL_UNREACHABLE                    NEXT_UNREACHABLE
//	TOOL_UNAVAILABLE, TOOL_RATE_LIMITED NEXT_RETRY_LATER
//	TOOL_FORBIDDEN                      NEXT_FORBIDDEN
//	TOOL_NOT_FOUND                      NEXT_NOT_FOUND
//	TOOL_BUSINESS_FAILED                NEXT_BUSINESS
//	MCP_INVALID_PARAMS                  NEXT_MCP_INVALID_PARAMS
//	TOOL_RESULT_EMPTY                   NEXT_EMPTY
//	TOOL_RESULT_INVALID                 NEXT_RESULT_INVALID
//	TOOL_RESULT_TOO_LARGE               NEXT_TOO_LARGE
//	ARG_JSON_INVALID                    NEXT_FIX_JSON
//	CATALOG_DENIED                      NEXT_CATALOG_OFFERED
//	any other code                      NEXT_TOOL_ERROR
//
// ARG_JSON_INVALID and CATALOG_DENIED are call-layer codes the default
// invoker decides itself; the response contract guard uses the result rows.
func DefaultNext(code errcode.Code) prompt.Key {
	switch code {
	case errcode.ToolTimeout:
		return prompt.NextTimeout
	case errcode.ToolUnreachable:
		return prompt.NextUnreachable
	case errcode.ToolUnavailable, errcode.ToolRateLimited:
		return prompt.NextRetryLater
	case errcode.ToolForbidden:
		return prompt.NextForbidden
	case errcode.ToolNotFound:
		return prompt.NextNotFound
	case errcode.ToolBusinessFailed:
		return prompt.NextBusiness
	case errcode.MCPInvalidParams:
		return prompt.NextMCPInvalidParams
	case errcode.ToolResultEmpty:
		return prompt.NextEmpty
	case errcode.ToolResultInvalid:
		return prompt.NextResultInvalid
	case errcode.ToolResultTooLarge:
		return prompt.NextTooLarge
	case errcode.ArgJSONInvalid:
		return prompt.NextFixJSON
	case errcode.CatalogDenied:
		return prompt.NextCatalogOffered
	default:
		return prompt.NextToolError
	}
}

type toolCode struct {
	tool string
	code errcode.Code
}

// ToolErrors is the next-step table of the specification (§7.2): for every
// failure the runtime classifies after (or instead of) running a tool, the
// step the model is told to take next. A step is looked up per (tool, code)
// first, then per code, then in [DefaultNext].
//
// The zero value (and a nil *ToolErrors) is the default table. Configure it
// with [ToolErrors.Set] and [ToolErrors.SetFor] before use; after that it is
// safe for concurrent reads ([ToolErrors.Lookup], [ToolErrors.Next]).
// Configuring it while it is being read is a data race.
type ToolErrors struct {
	byCode map[errcode.Code]Step
	byTool map[toolCode]Step
}

// Set makes s the next step of code for every tool without its own entry,
// and returns t for chaining. It panics if code is undefined or s is the
// zero Step (programming errors).
func (t *ToolErrors) Set(code errcode.Code, s Step) *ToolErrors {
	mustConfigure("Set", code, s)
	if t.byCode == nil {
		t.byCode = make(map[errcode.Code]Step)
	}
	t.byCode[code] = s
	return t
}

// SetFor makes s the next step of code for the tool named toolName only, and
// returns t for chaining. It panics if toolName is empty, code is undefined
// or s is the zero Step (programming errors).
func (t *ToolErrors) SetFor(toolName string, code errcode.Code, s Step) *ToolErrors {
	if toolName == "" {
		panic("invoker.ToolErrors.SetFor: empty tool name")
	}
	mustConfigure("SetFor", code, s)
	if t.byTool == nil {
		t.byTool = make(map[toolCode]Step)
	}
	t.byTool[toolCode{toolName, code}] = s
	return t
}

func mustConfigure(method string, code errcode.Code, s Step) {
	if !code.IsValid() {
		panic(fmt.Sprintf("invoker.ToolErrors.%s: undefined code %v", method, code))
	}
	if s.IsZero() {
		panic("invoker.ToolErrors." + method + ": empty step")
	}
}

// Lookup returns the step configured for (toolName, code), else for code,
// else the default [DefaultNext] key. The result is never the zero Step.
func (t *ToolErrors) Lookup(toolName string, code errcode.Code) Step {
	if t != nil {
		if s, ok := t.byTool[toolCode{toolName, code}]; ok {
			return s
		}
		if s, ok := t.byCode[code]; ok {
			return s
		}
	}
	return Step{key: DefaultNext(code)}
}

// Next renders the next step for a failure with code of the tool named
// toolName, in catalog cat (nil: English), with {tool} filled. The result is
// never empty.
func (t *ToolErrors) Next(cat *prompt.Catalog, toolName string, code errcode.Code) string {
	return t.Lookup(toolName, code).Render(cat, toolName)
}

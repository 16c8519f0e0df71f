package openairesponses

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// callData is what this adapter keeps in a call's [react.Part].Data: the
// function_call item's own id (fc_…), which the API wants back with a
// reasoning item.
type callData struct {
	ID string `json:"id,omitempty"`
}

// toInput converts the loop's history into the instructions (the system
// messages, in order) and the input items of a request: a user message an
// input message; an assistant message its items in the order the API
// produced them (its Parts: assistant messages, function_call items with
// their ids, reasoning items with their encrypted content), or, without
// Parts, an assistant message then one function_call per call; a tool
// message a function_call_output for its call id. The outputs of a turn
// are moved right after it (modelkit.ResultsFirst), as the API pairs them.
//
// Without store (the API keeps no item), a reasoning item that came
// without its encrypted content is left out: the API would look it up by
// its id and refuse the request ("Item with id … not found"), a request
// that fails every time; the function_call items of that turn then go
// without their item ids, which would name the missing reasoning item.
func toInput(history []react.Message, store bool) ([]string, responses.ResponseInputParam, error) {
	var system []string
	out := make(responses.ResponseInputParam, 0, len(history))
	for i, m := range modelkit.ResultsFirst(history) {
		switch m.Role {
		case react.RoleSystem:
			if m.Content != "" {
				system = append(system, m.Content)
			}
		case react.RoleUser:
			out = append(out, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleUser))
		case react.RoleAssistant:
			blocks := modelkit.AssistantBlocks(m, API)
			dropped := !store && slices.ContainsFunc(blocks, func(b modelkit.Block) bool {
				return b.Kind == modelkit.BlockOpaque && !replayable(b.Data)
			})
			for _, b := range blocks {
				switch b.Kind {
				case modelkit.BlockText:
					if b.Text != "" {
						out = append(out, responses.ResponseInputItemParamOfMessage(b.Text, responses.EasyInputMessageRoleAssistant))
					}
				case modelkit.BlockCall:
					item := responses.ResponseInputItemParamOfFunctionCall(string(b.Call.Args), b.Call.ID, b.Call.Name)
					var d callData
					if json.Unmarshal(b.Data, &d) == nil && d.ID != "" && !dropped {
						item.OfFunctionCall.ID = param.NewOpt(d.ID)
					}
					out = append(out, item)
				case modelkit.BlockOpaque:
					if json.Valid(b.Data) && (store || replayable(b.Data)) {
						out = append(out, param.Override[responses.ResponseInputItemUnionParam](json.RawMessage(b.Data)))
					}
				default: // a result block is never an assistant's
				}
			}
		case react.RoleTool:
			if m.ToolCallID == "" {
				return nil, nil, fmt.Errorf("message %d: tool result without a tool call id", i)
			}
			item := responses.ResponseInputItemParamOfFunctionCallOutput(m.Content)
			item.OfFunctionCallOutput.CallID = param.NewOpt(m.ToolCallID)
			out = append(out, item)
		default:
			return nil, nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return system, out, nil
}

// replayable reports whether an opaque item can be sent back without
// store: anything but a reasoning item without encrypted content.
func replayable(data []byte) bool {
	var it struct {
		Type             string `json:"type"`
		EncryptedContent string `json:"encrypted_content"`
	}
	_ = json.Unmarshal(data, &it) // valid JSON; another shape keeps the zero values
	return it.Type != "reasoning" || it.EncryptedContent != ""
}

// toTools converts tool specs to function tools whose parameters are the
// spec's schema, members verbatim, not strict (strict mode rewrites what
// a schema may say).
func toTools(specs []react.ToolSpec) ([]responses.ToolUnionParam, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := make([]responses.ToolUnionParam, 0, len(specs))
	for _, s := range specs {
		members, err := modelkit.SchemaObject(s.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", s.Name, err)
		}
		params := map[string]any{"type": "object", "properties": map[string]any{}}
		if members != nil {
			params = make(map[string]any, len(members))
			for k, v := range members {
				params[k] = v
			}
		}
		fn := responses.FunctionToolParam{Name: s.Name, Parameters: params, Strict: param.NewOpt(false)}
		if s.Description != "" {
			fn.Description = param.NewOpt(s.Description)
		}
		out = append(out, responses.ToolUnionParam{OfFunction: &fn})
	}
	return out, nil
}

// apiResponse is the part of a Responses API response the adapter reads.
type apiResponse struct {
	ID                string `json:"id"`
	Model             string `json:"model"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Output []json.RawMessage `json:"output"`
	Usage  *struct {
		InputTokens        int64 `json:"input_tokens"`
		OutputTokens       int64 `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokensDetails struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
}

// item is the part of an output item the adapter reads.
type item struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

// fromJSON converts a response body (or the response of a stream's
// terminal event).
func fromJSON(body []byte) (react.Response, error) {
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return react.Response{}, err
	}
	return fromResponse(r, body)
}

// fromResponse converts a response: its message items' texts
// (output_text, or a refusal) concatenated, its function_call items as
// the calls in order with their arguments verbatim, its reasoning items
// as opaque parts, the Parts in output order, the id, model, usage and
// the finish reason: the status "completed", or for an incomplete
// response its reason (max_output_tokens, content_filter). A failed
// response is an error of the kind its code names; a response without
// a status or output array is malformed.
func fromResponse(r apiResponse, body []byte) (react.Response, error) {
	switch r.Status {
	case "completed":
	case "incomplete":
	case "failed":
		code, msg := "", ""
		if r.Error != nil {
			code, msg = r.Error.Code, r.Error.Message
		}
		e := modelkit.InBand(name, "", code, msg)
		if code == "server_error" || code == "" {
			e.Kind = modelerr.Server
		}
		return react.Response{}, e
	default:
		return react.Response{}, fmt.Errorf("a response with status %q", r.Status)
	}
	if r.Output == nil {
		return react.Response{}, errors.New("the response has no output")
	}
	out := react.Response{ID: r.ID, Model: r.Model, FinishReason: r.Status}
	if r.Status == "incomplete" && r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "" {
		out.FinishReason = r.IncompleteDetails.Reason
	}
	if u := r.Usage; u != nil {
		out.Usage = &react.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CachedInputTokens: u.InputTokensDetails.CachedTokens, ReasoningTokens: u.OutputTokensDetails.ReasoningTokens}
	}
	var ids []string
	for _, raw := range r.Output {
		var it item
		if err := json.Unmarshal(raw, &it); err != nil {
			return react.Response{}, fmt.Errorf("an output item: %w", err)
		}
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				text := c.Text
				if c.Type == "refusal" {
					text = c.Refusal
				}
				if text == "" {
					continue
				}
				out.Text += text
				out.Parts = append(out.Parts, react.Part{Kind: react.PartText, Text: text})
			}
		case "function_call":
			p := react.Part{Kind: react.PartCall, Call: len(out.ToolCalls)}
			if it.ID != "" {
				p.API, p.Data = API, mustJSON(callData{ID: it.ID})
			}
			out.Parts = append(out.Parts, p)
			call := react.ToolCall{Name: it.Name}
			if it.Arguments != "" {
				call.Args = json.RawMessage(it.Arguments)
			}
			out.ToolCalls = append(out.ToolCalls, call)
			ids = append(ids, it.CallID)
		case "reasoning":
			var c bytes.Buffer
			if err := json.Compact(&c, raw); err != nil {
				return react.Response{}, fmt.Errorf("a reasoning item: %w", err)
			}
			out.Parts = append(out.Parts, react.Part{Kind: react.PartOpaque, API: API, Data: c.Bytes()})
		}
	}
	base := r.ID
	if base == "" {
		base = modelkit.HashID(body)
	}
	modelkit.CallIDs(ids, base)
	for i := range out.ToolCalls {
		out.ToolCalls[i].ID = ids[i]
	}
	return out, nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v) // strings only: cannot fail
	return b
}

func malformed(format string, args ...any) *modelerr.Error {
	e := modelkit.Malformed(name, format, args...)
	e.StatusCode = http.StatusOK
	return e
}

// asModelErr returns the *modelerr.Error in err's chain, or nil.
func asModelErr(err error) *modelerr.Error {
	var e *modelerr.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

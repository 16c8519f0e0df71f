package gemini

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// partData is what this adapter keeps in a [react.Part]'s Data: the
// thought signature the API attached to the part, whether a call's id was
// made up by the adapter (the API sent none: it is not sent back), and,
// for a thought part, the part itself.
type partData struct {
	Signature []byte      `json:"signature,omitempty"`
	Synthetic bool        `json:"synthetic,omitempty"`
	Thought   *genai.Part `json:"thought,omitempty"`
}

func (d partData) encode() []byte {
	if d.Signature == nil && !d.Synthetic && d.Thought == nil {
		return nil
	}
	b, _ := json.Marshal(d) // bytes, a bool and a part of plain fields: cannot fail
	return b
}

func decodeData(b []byte) partData {
	var d partData
	_ = json.Unmarshal(b, &d) // another version's data: ignored
	return d
}

// toContents converts the loop's history into the system instruction and
// the contents of a request (modelkit.Turns): system messages become the
// system instruction's text parts; user messages text parts of a "user"
// content; tool messages functionResponse parts of a "user" content
// (all the results of a turn in one content, first), with the call's id
// and the tool's name, the text as {"output": …} or, for a result that is
// not a SUCCESS, {"error": …}; assistant messages a "model" content with
// the parts in the order the API sent them, each with its thought
// signature, thought parts included (or, without Parts, the text then one
// functionCall part per call, arguments as an object).
//
// A model content whose function calls carry no signature at all (a turn
// recorded with another provider, a host's own history) gets
// the skip signature on its first call when sentinel is set, the signature
// Google documents for calls the model did not produce: Gemini 3 refuses
// a replayed step whose first call has none.
func toContents(history []react.Message, sentinel bool) (*genai.Content, []*genai.Content, error) {
	sys, turns, err := modelkit.Turns(history, API)
	if err != nil {
		return nil, nil, err
	}
	var system *genai.Content
	if len(sys) > 0 {
		system = &genai.Content{Role: genai.RoleUser}
		for _, s := range sys {
			system.Parts = append(system.Parts, &genai.Part{Text: s})
		}
	}
	out := make([]*genai.Content, 0, len(turns))
	for _, t := range turns {
		c := &genai.Content{Role: genai.RoleUser}
		if t.Assistant {
			c.Role = genai.RoleModel
		}
		for _, b := range t.Blocks {
			d := decodeData(b.Data)
			switch b.Kind {
			case modelkit.BlockText:
				c.Parts = append(c.Parts, &genai.Part{Text: b.Text, ThoughtSignature: d.Signature})
			case modelkit.BlockCall:
				var args map[string]any
				_ = json.Unmarshal(modelkit.ObjectArgs(b.Call.Args), &args) // an object: cannot fail
				fc := &genai.FunctionCall{Name: b.Call.Name, Args: args}
				if !d.Synthetic {
					fc.ID = b.Call.ID
				}
				c.Parts = append(c.Parts, &genai.Part{FunctionCall: fc, ThoughtSignature: d.Signature})
			case modelkit.BlockResult:
				key := "output"
				if b.Result.IsError {
					key = "error"
				}
				c.Parts = append(c.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{
					ID: b.Result.ToolCallID, Name: b.Result.ToolName, Response: map[string]any{key: b.Result.Content},
				}})
			case modelkit.BlockOpaque:
				if d.Thought != nil {
					c.Parts = append(c.Parts, d.Thought)
				}
			}
		}
		if len(c.Parts) == 0 {
			continue
		}
		if t.Assistant && sentinel {
			signFirstCall(c)
		}
		out = append(out, c)
	}
	fixResultIDs(out)
	return system, out, nil
}

// skipSignature is the thought signature sent on the first function call
// of a replayed model turn that has none, for every model but those
// named gemini-1… and gemini-2… (which require no signature): on the wire,
// "skip_thought_signature_validator", the value Google documents for
// function calls the model did not produce itself (a turn of another
// model, calls a host wrote). The API reads the field as base64, so
// these are its bytes.
var skipSignature = mustDecode("skip_thought_signature_validator")

func mustDecode(s string) []byte {
	b, err := base64.URLEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// wantsSentinel reports whether requests to model get the skip signature:
// every model but those whose name (after any "models/" or
// "publishers/google/models/" path) starts gemini-1 or gemini-2, so that
// later generations and aliases ("gemini-flash-latest") have it.
func wantsSentinel(model string) bool {
	name := model[strings.LastIndexByte(model, '/')+1:]
	rest, ok := strings.CutPrefix(name, "gemini-")
	if !ok || rest == "" {
		return true
	}
	return rest[0] != '1' && rest[0] != '2' || len(rest) > 1 && rest[1] >= '0' && rest[1] <= '9'
}

// signFirstCall gives the first function call of a model content
// the skip signature when none of its calls carries a signature.
func signFirstCall(c *genai.Content) {
	var first *genai.Part
	for _, p := range c.Parts {
		if p.FunctionCall == nil {
			continue
		}
		if p.ThoughtSignature != nil {
			return
		}
		if first == nil {
			first = p
		}
	}
	if first != nil {
		first.ThoughtSignature = skipSignature
	}
}

// fixResultIDs leaves out the id of a functionResponse whose call was
// sent without one (the adapter made it up), so that the pair matches as
// the API paired it: by name and position.
func fixResultIDs(contents []*genai.Content) {
	sent := map[string]bool{}
	for _, c := range contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil && p.FunctionCall.ID != "" {
				sent[p.FunctionCall.ID] = true
			}
		}
	}
	for _, c := range contents {
		for _, p := range c.Parts {
			if r := p.FunctionResponse; r != nil && !sent[r.ID] {
				r.ID = ""
			}
		}
	}
}

// toTools converts tool specs to one tool of function declarations whose
// parametersJsonSchema is the spec's schema, members kept verbatim; an
// empty schema means a function without parameters.
func toTools(specs []react.ToolSpec) ([]*genai.Tool, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	decls := make([]*genai.FunctionDeclaration, 0, len(specs))
	for _, s := range specs {
		members, err := modelkit.SchemaObject(s.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", s.Name, err)
		}
		fd := &genai.FunctionDeclaration{Name: s.Name, Description: s.Description}
		if members != nil {
			fd.ParametersJsonSchema = members
		}
		decls = append(decls, fd)
	}
	return []*genai.Tool{{FunctionDeclarations: decls}}, nil
}

// turn is a response being converted: the first candidate's pieces.
type turn struct {
	out   react.Response
	calls []*genai.FunctionCall
	sigs  [][]byte
	// the text part being extended by streamed fragments (-1: none)
	textPart int
}

// fromResponse converts a whole response: the first candidate's text
// parts (thought parts apart), its function calls in order with their
// arguments as JSON, its finish reason, the response's id, model version
// and usage, and the Parts that keep the order and the thought
// signatures. A response without a candidate is malformed unless the
// prompt was blocked (promptFeedback), which is an empty turn whose
// finish reason is the block reason.
func fromResponse(r *genai.GenerateContentResponse) (react.Response, error) {
	t := turn{textPart: -1}
	if err := t.add(r, false); err != nil {
		return react.Response{}, err
	}
	return t.response(), nil
}

// add adds a response (or a streamed chunk of one) to t; joined says
// whether text fragments extend the last text part (streaming).
func (t *turn) add(r *genai.GenerateContentResponse, joined bool) error {
	if r == nil {
		return errors.New("an empty response")
	}
	if t.out.ID == "" {
		t.out.ID = r.ResponseID
	}
	if t.out.Model == "" {
		t.out.Model = r.ModelVersion
	}
	if u := r.UsageMetadata; u != nil {
		t.out.Usage = &react.Usage{
			InputTokens:       int64(u.PromptTokenCount) + int64(u.ToolUsePromptTokenCount),
			OutputTokens:      int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
			CachedInputTokens: int64(u.CachedContentTokenCount),
			ReasoningTokens:   int64(u.ThoughtsTokenCount),
		}
	}
	if len(r.Candidates) == 0 || r.Candidates[0] == nil {
		if f := r.PromptFeedback; f != nil && f.BlockReason != "" {
			t.out.FinishReason = string(f.BlockReason)
			return nil
		}
		if joined {
			return nil // a chunk with usage only
		}
		return errors.New("the response has no candidate")
	}
	c := r.Candidates[0]
	if c.FinishReason != "" {
		t.out.FinishReason = string(c.FinishReason)
	}
	if c.Content == nil {
		return nil
	}
	for _, p := range c.Content.Parts {
		if p == nil {
			continue
		}
		switch {
		case p.Thought:
			th := *p
			t.out.Parts = append(t.out.Parts, react.Part{Kind: react.PartOpaque, API: API, Data: partData{Thought: &th}.encode()})
			t.textPart = -1
		case p.FunctionCall != nil:
			t.out.Parts = append(t.out.Parts, react.Part{Kind: react.PartCall, Call: len(t.calls)})
			t.calls = append(t.calls, p.FunctionCall)
			t.sigs = append(t.sigs, p.ThoughtSignature)
			t.textPart = -1
		case p.Text != "" || p.ThoughtSignature != nil:
			t.out.Text += p.Text
			if joined && t.textPart >= 0 && (p.ThoughtSignature == nil || decodeData(t.out.Parts[t.textPart].Data).Signature == nil) {
				tp := &t.out.Parts[t.textPart]
				tp.Text += p.Text
				if p.ThoughtSignature != nil {
					tp.API, tp.Data = API, partData{Signature: p.ThoughtSignature}.encode()
				}
				continue
			}
			part := react.Part{Kind: react.PartText, Text: p.Text}
			if p.ThoughtSignature != nil {
				part.API, part.Data = API, partData{Signature: p.ThoughtSignature}.encode()
			}
			t.out.Parts = append(t.out.Parts, part)
			t.textPart = len(t.out.Parts) - 1
		}
	}
	return nil
}

// response returns the turn: calls with ids (made up, and marked so, for
// calls the API sent without one) and their parts' data.
func (t *turn) response() react.Response {
	out := t.out
	if len(t.calls) == 0 {
		return out
	}
	ids := make([]string, len(t.calls))
	for i, fc := range t.calls {
		ids[i] = fc.ID
	}
	base := out.ID
	if base == "" {
		base = "gemini"
	}
	modelkit.CallIDs(ids, base)
	out.ToolCalls = make([]react.ToolCall, len(t.calls))
	for i, fc := range t.calls {
		args, err := json.Marshal(fc.Args)
		if err != nil || fc.Args == nil {
			args = []byte(`{}`)
		}
		out.ToolCalls[i] = react.ToolCall{ID: ids[i], Name: fc.Name, Args: args}
	}
	out.Parts = append([]react.Part(nil), out.Parts...)
	for i := range out.Parts {
		p := &out.Parts[i]
		if p.Kind != react.PartCall {
			continue
		}
		d := partData{Signature: t.sigs[p.Call], Synthetic: ids[p.Call] != t.calls[p.Call].ID}
		if b := d.encode(); b != nil {
			p.API, p.Data = API, b
		}
	}
	return out
}

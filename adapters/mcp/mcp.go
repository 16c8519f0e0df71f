package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reactguard/reactguard/errcode"
	"github.com/reactguard/reactguard/prompt"
	"github.com/reactguard/reactguard/tool"
)

// Options configures how the tools of an MCP session become reactguard
// tools. The zero value, and a nil *Options, mean the defaults: every tool,
// named as the server names it, with the effect [DefaultEffect] decides,
// rejection texts in English. Options are read by [Tools] and [Convert]
// only; changing them afterwards has no effect on tools already built.
type Options struct {
	// Effects overrides the effect of the tools it names (keyed by the MCP
	// tool name, before Prefix). It wins over Effect and over the tool's
	// annotations. A value of tool.Unspecified counts as a write, as it
	// does everywhere in reactguard.
	Effects map[string]tool.Effect
	// Effect decides the effect of every tool that Effects does not name.
	// Nil means [DefaultEffect]: read only when the server annotates the
	// tool readOnlyHint=true.
	Effect func(t *sdk.Tool) tool.Effect
	// Include selects the tools [Tools] converts. Nil means every tool.
	Include func(t *sdk.Tool) bool
	// Prefix is prepended to each tool's name as the model sees it (for
	// example "files_" when several servers share a catalog). The call to
	// the server always uses the server's own name.
	Prefix string
	// Timeout becomes each tool's [tool.Tool.Timeout]; 0 leaves it unset.
	Timeout time.Duration
	// Lang is the language of the texts of the rejections the adapter
	// builds itself (ARG_REJECTED, ARG_JSON_INVALID). The zero value is
	// English. Use the language of the loop the tools run in.
	Lang prompt.Lang
	// IdempotencyMetaKey, when not empty, is the _meta key under which each
	// call sends the runtime's idempotency key ([tool.Request]
	// IdempotencyKey) to the server, e.g. "example.com/idempotency-key".
	// MCP defines no standard key; a server that dedupes writes reads it
	// from the request's _meta. Empty means the key is not sent.
	IdempotencyMetaKey string
}

// DefaultEffect returns the effect the MCP specification's defaults imply
// for t: [tool.Read] when t is annotated readOnlyHint=true, [tool.Write]
// otherwise (the MCP default of readOnlyHint is false, so an unannotated
// tool is a write). A nil t is a write.
func DefaultEffect(t *sdk.Tool) tool.Effect {
	if t != nil && t.Annotations != nil && t.Annotations.ReadOnlyHint {
		return tool.Read
	}
	return tool.Write
}

// Tools lists the tools of session (following pagination) and converts each
// one that opts.Include selects with [Convert], in the server's order. It
// fails if listing fails or a tool cannot be converted; the error names the
// tool. A nil opts means the defaults.
//
// The tools call session; they stay usable for as long as the session is
// open and are safe for concurrent use. Tools does not watch for
// tools/list_changed notifications: call it again to pick up changes.
// It panics if session is nil (a programming error).
func Tools(ctx context.Context, session *sdk.ClientSession, opts *Options) ([]*tool.Tool, error) {
	if session == nil {
		panic("mcp.Tools: nil session")
	}
	if opts == nil {
		opts = &Options{}
	}
	var out []*tool.Tool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcp: listing tools: %w", err)
		}
		if opts.Include != nil && !opts.Include(t) {
			continue
		}
		rt, err := Convert(session, t, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, rt)
	}
	return out, nil
}

// Convert returns the reactguard tool for the MCP tool t of session: the
// same name (after opts.Prefix), the description (the title when there is
// no description), the input schema converted to a
// [jsonschema.Schema] (an absent schema becomes {"type":"object"}), the
// effect per opts, and a Func that calls the tool on session and
// classifies the outcome (see the package documentation). It fails if t has
// no name or its input schema is not a JSON Schema object. A nil opts means
// the defaults. It panics if session or t is nil (a programming error).
func Convert(session *sdk.ClientSession, t *sdk.Tool, opts *Options) (*tool.Tool, error) {
	if session == nil || t == nil {
		panic("mcp.Convert: nil session or tool")
	}
	if opts == nil {
		opts = &Options{}
	}
	if t.Name == "" {
		return nil, errors.New("mcp: a tool without a name")
	}
	schema, err := inputSchema(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("mcp: tool %q: input schema: %w", t.Name, err)
	}
	effect, ok := opts.Effects[t.Name]
	if !ok {
		if opts.Effect != nil {
			effect = opts.Effect(t)
		} else {
			effect = DefaultEffect(t)
		}
	}
	c := &caller{
		session: session,
		remote:  t.Name,
		name:    opts.Prefix + t.Name,
		cat:     prompt.For(opts.Lang),
		metaKey: opts.IdempotencyMetaKey,
	}
	return &tool.Tool{
		Name:        c.name,
		Description: description(t),
		InputSchema: schema,
		Effect:      effect,
		Func:        c.call,
		Timeout:     opts.Timeout,
	}, nil
}

// description returns t's description, falling back to its titles.
func description(t *sdk.Tool) string {
	switch {
	case t.Description != "":
		return t.Description
	case t.Title != "":
		return t.Title
	case t.Annotations != nil:
		return t.Annotations.Title
	}
	return ""
}

// inputSchema converts the client-side form of an MCP input schema (the
// default JSON unmarshalling of the server's schema, or anything that
// marshals to JSON) to a *jsonschema.Schema.
func inputSchema(v any) (*jsonschema.Schema, error) {
	switch s := v.(type) {
	case nil:
		return &jsonschema.Schema{Type: "object"}, nil
	case *jsonschema.Schema:
		return s.CloneSchemas(), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return &jsonschema.Schema{Type: "object"}, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// caller calls one MCP tool. It is immutable and safe for concurrent use.
type caller struct {
	session *sdk.ClientSession
	remote  string // the server's name of the tool
	name    string // the name the model sees
	cat     *prompt.Catalog
	metaKey string
}

// call is the tool's Func: it sends tools/call and classifies the outcome.
func (c *caller) call(ctx context.Context, req tool.Request) (any, error) {
	params := &sdk.CallToolParams{Name: c.remote}
	args := bytes.TrimSpace(req.Args)
	if len(args) > 0 && !bytes.Equal(args, []byte("null")) {
		if !json.Valid(args) || args[0] != '{' {
			detail := "not a JSON object"
			if !json.Valid(args) {
				detail = "not valid JSON"
			}
			return nil, tool.Reject(errcode.ArgJSONInvalid,
				c.cat.Reason(errcode.ArgJSONInvalid, "tool", c.name, "detail", detail),
				c.cat.Text(prompt.NextFixJSON, "tool", c.name))
		}
		params.Arguments = json.RawMessage(args)
	}
	if c.metaKey != "" && req.IdempotencyKey != "" {
		params.Meta = sdk.Meta{c.metaKey: req.IdempotencyKey}
	}
	res, err := c.session.CallTool(ctx, params)
	return c.classify(ctx, res, err)
}

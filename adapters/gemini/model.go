package gemini

import (
	"context"

	"google.golang.org/genai"

	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// Provider is the provider name [Model.Describe] reports by default for
// the Gemini API backend, as the OpenTelemetry GenAI conventions name it;
// [ProviderVertex] is reported for the Vertex AI backend.
const (
	Provider       = "gcp.gemini"
	ProviderVertex = "gcp.vertex_ai"
)

// API names this adapter's wire format in [react.Part].API: the thought
// signatures it keeps are sent back only by it.
const API = "gemini"

// Options configures a [Model]. The zero value (and nil) means defaults.
type Options struct {
	// Temperature and TopP are the sampling parameters; nil leaves them to
	// the API.
	Temperature *float64
	TopP        *float64
	// MaxTokens bounds the tokens of one turn (maxOutputTokens); 0 leaves
	// it to the API. A turn that reaches it ends with finish reason
	// MAX_TOKENS, and the loop runs none of its calls (react.CutOff).
	MaxTokens int64
	// Provider is the provider [Model.Describe] reports; "" means
	// [Provider] for the Gemini API backend and [ProviderVertex] for
	// Vertex AI.
	Provider string
	// NoStream makes [Model.GenerateStream] return nil, so that the loop
	// asks with [Model.Generate] (one response a turn).
	NoStream bool
	// Configure, when not nil, is called on the configuration of every
	// request after the adapter set its own fields (system instruction,
	// tools, sampling parameters), to set what the adapter does not:
	// safety settings, a thinking configuration, labels. It must not keep
	// the configuration.
	Configure func(*genai.GenerateContentConfig)
}

// Model is a [react.Model] and [react.StreamModel] backed by the Gemini
// API or Vertex AI through the official SDK's client.
//
// A Model is immutable after [New] and safe for concurrent use by many
// loops; it holds no conversation state.
type Model struct {
	client *genai.Client
	model  string
	opts   Options
	info   react.ModelInfo
	// sentinel: replayed calls without a signature get skipSignature
	sentinel bool
}

var (
	_ react.Model       = (*Model)(nil)
	_ react.StreamModel = (*Model)(nil)
	_ react.Describer   = (*Model)(nil)
)

// New returns a Model that sends requests through client to the named
// model (e.g. "gemini-2.5-flash"). opts may be nil.
//
// New panics if client is nil or model is empty: programming errors.
func New(client *genai.Client, model string, opts *Options) *Model {
	if client == nil {
		panic("gemini: New with a nil client")
	}
	if model == "" {
		panic("gemini: New with an empty model name")
	}
	m := &Model{client: client, model: model, sentinel: wantsSentinel(model)}
	if opts != nil {
		m.opts = *opts
	}
	cc := client.ClientConfig()
	def, base := Provider, "https://generativelanguage.googleapis.com/"
	if cc.Backend == genai.BackendVertexAI {
		def, base = ProviderVertex, "https://aiplatform.googleapis.com/"
		if cc.Location != "" && cc.Location != "global" {
			base = "https://" + cc.Location + "-aiplatform.googleapis.com/"
		}
	}
	if cc.HTTPOptions.BaseURL != "" {
		base = cc.HTTPOptions.BaseURL
	}
	set := modelkit.Settings{Provider: m.opts.Provider, Temperature: m.opts.Temperature, TopP: m.opts.TopP, MaxTokens: m.opts.MaxTokens}
	m.info = set.Info(def, model, base, true)
	return m
}

// Name returns the model name requests are sent with.
func (m *Model) Name() string { return m.model }

// Describe implements [react.Describer]: the provider, the model, the
// host and port requests go to (the client's base URL, else the
// backend's default), the request parameters set in Options, and
// SystemApart (the API takes the system instruction apart).
func (m *Model) Describe() react.ModelInfo { return m.info }

// Generate sends the history and tool specs as one generateContent
// request and returns the first candidate's text and function calls.
//
// Every failure is a [*modelerr.Error] ([modelerr.KindOf] says which):
// HTTP errors, transport errors, deadlines, and responses that do not
// decode or carry no candidate. req is not modified.
func (m *Model) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	contents, config, err := m.request(req)
	if err != nil {
		return react.Response{}, requestErr(err)
	}
	resp, err := m.generate(ctx, contents, config)
	if err != nil {
		return react.Response{}, classify(ctx, err)
	}
	out, err := fromResponse(resp)
	if err != nil {
		return react.Response{}, malformed("%w", err)
	}
	return out, nil
}

// request builds the contents and the configuration of a request.
func (m *Model) request(req react.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	system, contents, err := toContents(req.Messages, m.sentinel)
	if err != nil {
		return nil, nil, err
	}
	tools, err := toTools(req.Tools)
	if err != nil {
		return nil, nil, err
	}
	config := &genai.GenerateContentConfig{SystemInstruction: system, Tools: tools, AutomaticContinuation: genai.Ptr(false)}
	if t := m.opts.Temperature; t != nil {
		config.Temperature = genai.Ptr(float32(*t))
	}
	if p := m.opts.TopP; p != nil {
		config.TopP = genai.Ptr(float32(*p))
	}
	if m.opts.MaxTokens > 0 {
		config.MaxOutputTokens = int32(min(m.opts.MaxTokens, 1<<31-1))
	}
	if m.opts.Configure != nil {
		m.opts.Configure(config)
	}
	return contents, config, nil
}

// generate calls the SDK. The SDK's conversion of a response body panics
// on some bodies that are not what the API sends (a field of another JSON
// type): such a body is a malformed answer, not a crash of the host.
func (m *Model) generate(ctx context.Context, contents []*genai.Content, config *genai.GenerateContentConfig) (resp *genai.GenerateContentResponse, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, malformed("the SDK could not convert the response: %v", p)
		}
	}()
	return m.client.Models.GenerateContent(ctx, m.model, contents, config)
}

package anthropic

import (
	"context"
	"errors"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// DefaultMaxTokens is the max_tokens of a request when
// [Options.MaxTokens] is 0.
const DefaultMaxTokens = 4096

// Options configures a [Model]. The zero value (and nil) means defaults.
type Options struct {
	// MaxTokens bounds the tokens of one model turn (max_tokens, which the
	// API requires); 0 means [DefaultMaxTokens]. The SDK refuses a
	// non-streaming request it expects to take over 10 minutes (about
	// 21,000 tokens) unless RequestOptions sets option.WithRequestTimeout.
	MaxTokens int64
	// Temperature is the sampling temperature; nil leaves it to the API.
	Temperature *float64
	// TopP is the nucleus sampling bound (top_p); nil leaves it to the
	// API.
	TopP *float64
	// MaxRetries is how many times the SDK itself retries a failed request
	// (429, 529, 5xx, connection errors) before Generate returns. The
	// default 0 disables the SDK's retries: a failure reaches the host at
	// once, with [modelerr.Error.RetryAfter] set, and the host decides
	// whether to wait and resume the loop's snapshot. (The SDK's own
	// default is 2 retries.) Negative values count as 0.
	MaxRetries int
	// Provider is the provider [Model.Describe] reports (telemetry's
	// gen_ai.provider.name); "" means [Provider], "anthropic". Set it when
	// the client reaches Claude through another provider, e.g.
	// "aws.bedrock" or "gcp.vertex_ai".
	Provider string
	// NoStream makes [Model.GenerateStream] return nil, so that the loop
	// asks with [Model.Generate] (one JSON response a turn) even when the
	// host streams the run. By default the loop streams every model call
	// of this Model (see GenerateStream).
	NoStream bool
	// RequestOptions are appended to every request after the adapter's
	// own options, e.g. option.WithHeader("anthropic-beta", ...) or
	// option.WithRequestTimeout.
	RequestOptions []option.RequestOption
}

// Model is a [react.Model] backed by the Anthropic Messages API.
//
// A Model is immutable after [New] and safe for concurrent use by many
// loops; it holds no conversation state.
type Model struct {
	client sdk.Client
	model  string
	opts   Options
	info   react.ModelInfo
}

var (
	_ react.Model     = (*Model)(nil)
	_ react.Describer = (*Model)(nil)
)

// Provider is the provider name [Model.Describe] reports by default.
const Provider = "anthropic"

// New returns a Model that sends requests through client to the named
// model (e.g. "claude-sonnet-4-5"). opts may be nil.
//
// New panics if model is empty: that is a programming error.
func New(client sdk.Client, model string, opts *Options) *Model {
	if model == "" {
		panic("anthropic: New with an empty model name")
	}
	m := &Model{client: client, model: model}
	if opts != nil {
		m.opts = *opts
		m.opts.RequestOptions = append([]option.RequestOption(nil), opts.RequestOptions...)
	}
	if m.opts.MaxTokens <= 0 {
		m.opts.MaxTokens = DefaultMaxTokens
	}
	m.opts.MaxRetries = max(m.opts.MaxRetries, 0)
	set := modelkit.Settings{Provider: m.opts.Provider, Temperature: m.opts.Temperature, TopP: m.opts.TopP, MaxTokens: m.opts.MaxTokens}
	m.info = set.Info(Provider, model, baseURL(client), true)
	return m
}

// errProbe stops the request baseURL builds before it is sent.
var errProbe = errors.New("anthropic: probe")

// baseURL is the URL the client sends requests to, as its options resolve
// it (option.WithBaseURL, ANTHROPIC_BASE_URL, the SDK's default): a
// request built with them is stopped by a middleware before it is sent,
// so nothing reaches the network. "" when the SDK refuses to build it.
func baseURL(client sdk.Client) string {
	var u string
	_ = client.Post(context.Background(), "", nil, nil, option.WithMaxRetries(0),
		option.WithMiddleware(func(req *http.Request, _ option.MiddlewareNext) (*http.Response, error) {
			u = req.URL.String()
			return nil, errProbe
		}))
	return u
}

// sampling are the request options of the sampling parameters set.
func (m *Model) sampling(opts []option.RequestOption) []option.RequestOption {
	if m.opts.Temperature != nil {
		opts = append(opts, option.WithJSONSet("temperature", *m.opts.Temperature))
	}
	if m.opts.TopP != nil {
		opts = append(opts, option.WithJSONSet("top_p", *m.opts.TopP))
	}
	return opts
}

// Name returns the model name requests are sent with.
func (m *Model) Name() string { return m.model }

// Describe implements [react.Describer]: the provider (Options.Provider,
// default [Provider]), the model name requests are sent with, the host
// and port of the client's base URL, the request parameters (max_tokens
// always: the API requires it) and SystemApart (the API takes the system
// prompt apart).
func (m *Model) Describe() react.ModelInfo { return m.info }

// Generate sends the history and tool specs as one Messages API request
// and returns the model's text and tool_use blocks. Tool inputs are
// returned exactly as the API sent them.
//
// Every failure is a [*modelerr.Error] ([modelerr.KindOf] says which
// kind): HTTP errors (overloaded 529 included), transport errors,
// deadlines, and responses that do not decode or carry no content.
// Generate never turns a model-side failure into a tool outcome. req is
// not modified.
func (m *Model) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return react.Response{}, classify(err, nil) // never sent: modelerr.Request
	}
	var resp *http.Response
	opts := make([]option.RequestOption, 0, 3+len(m.opts.RequestOptions))
	opts = append(opts, option.WithMaxRetries(m.opts.MaxRetries), option.WithResponseInto(&resp))
	opts = m.sampling(opts)
	opts = append(opts, m.opts.RequestOptions...)
	msg, err := m.client.Messages.New(ctx, params, opts...)
	if err != nil {
		return react.Response{}, classify(err, resp)
	}
	out, err := fromMessage(msg)
	if err != nil {
		return react.Response{}, classify(err, resp) // a 2xx body: modelerr.Malformed
	}
	return out, nil
}

// params builds the request body.
func (m *Model) params(req react.Request) (sdk.MessageNewParams, error) {
	system, msgs, err := toMessages(req.Messages)
	if err != nil {
		return sdk.MessageNewParams{}, err
	}
	tools, err := toTools(req.Tools)
	if err != nil {
		return sdk.MessageNewParams{}, err
	}
	return sdk.MessageNewParams{
		Model:     m.model,
		MaxTokens: m.opts.MaxTokens,
		System:    system,
		Messages:  msgs,
		Tools:     tools,
	}, nil
}

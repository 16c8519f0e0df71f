package openai

import (
	"context"
	"errors"
	"net/http"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// Options configures a [Model]. The zero value (and nil) means defaults.
type Options struct {
	// Temperature is the sampling temperature; nil leaves it to the server.
	Temperature *float64
	// TopP is the nucleus sampling bound (top_p); nil leaves it to the
	// server.
	TopP *float64
	// MaxTokens bounds the tokens of one turn (max_completion_tokens); 0
	// leaves it to the server. A turn that reaches it ends with finish
	// reason length, and the loop runs none of its calls (react.CutOff).
	MaxTokens int64
	// MaxRetries is how many times the SDK itself retries a failed request
	// (429, 5xx, connection errors) before Generate returns. The default
	// 0 disables the SDK's retries: a failure reaches the host at once,
	// with [modelerr.Error.RetryAfter] set, and the host decides whether
	// to wait and resume the loop's snapshot. (The SDK's own default is 2
	// retries and it may wait up to 2 minutes on a server's Retry-After.)
	// Negative values count as 0.
	MaxRetries int
	// Provider is the provider [Model.Describe] reports (telemetry's
	// gen_ai.provider.name); "" means [Provider], "openai", which the
	// OpenTelemetry GenAI conventions also use for compatible servers
	// reached through this API. Set it to tell a compatible server apart
	// (e.g. "azure.ai.openai", "deepseek", or your own name for a local
	// server).
	Provider string
	// NoStream makes [Model.GenerateStream] return nil, so that the loop
	// asks with [Model.Generate] (one JSON response a turn) even when the
	// host streams the run: for a compatible server that cannot stream,
	// or cannot stream tool calls. By default the loop streams every model
	// call of this Model (see GenerateStream).
	NoStream bool
	// RequestOptions are appended to every request after the adapter's
	// own options, e.g. option.WithJSONSet("parallel_tool_calls", false) or
	// option.WithRequestTimeout.
	RequestOptions []option.RequestOption
}

// Model is a [react.Model] backed by the OpenAI Chat Completions API, or
// by any server that speaks it (Ollama, vLLM, LM Studio, llama.cpp).
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
const Provider = "openai"

// New returns a Model that sends requests through client to the named
// model (e.g. "gpt-4.1", or "qwen3:8b" on Ollama). opts may be nil.
//
// New panics if model is empty: that is a programming error.
func New(client sdk.Client, model string, opts *Options) *Model {
	if model == "" {
		panic("openai: New with an empty model name")
	}
	m := &Model{client: client, model: model}
	if opts != nil {
		m.opts = *opts
		m.opts.RequestOptions = append([]option.RequestOption(nil), opts.RequestOptions...)
	}
	m.opts.MaxRetries = max(m.opts.MaxRetries, 0)
	set := modelkit.Settings{Provider: m.opts.Provider, Temperature: m.opts.Temperature, TopP: m.opts.TopP, MaxTokens: m.opts.MaxTokens}
	m.info = set.Info(Provider, model, baseURL(client), false)
	return m
}

// errProbe stops the request baseURL builds before it is sent.
var errProbe = errors.New("openai: probe")

// baseURL is the URL the client sends requests to, as its options resolve
// it (option.WithBaseURL, OPENAI_BASE_URL, the SDK's default): a request
// built with them is stopped by a middleware before it is sent, so
// nothing reaches the network. "" when the SDK refuses to build it.
func baseURL(client sdk.Client) string {
	var u string
	_ = client.Post(context.Background(), "", nil, nil, option.WithMaxRetries(0),
		option.WithMiddleware(func(req *http.Request, _ option.MiddlewareNext) (*http.Response, error) {
			u = req.URL.String()
			return nil, errProbe
		}))
	return u
}

// Name returns the model name requests are sent with.
func (m *Model) Name() string { return m.model }

// Describe implements [react.Describer]: the provider (Options.Provider,
// default [Provider]), the model name requests are sent with, the host
// and port of the client's base URL, and the request parameters set in
// Options.
func (m *Model) Describe() react.ModelInfo { return m.info }

// Generate sends the history and tool specs as one chat completion request
// and returns the first choice's text and tool calls. Tool call arguments
// are returned exactly as the server sent them, valid JSON or not.
//
// Every failure is a [*modelerr.Error] ([modelerr.KindOf] says which
// kind): HTTP errors, transport errors, deadlines, and responses that do
// not decode or carry no choice. Generate never turns a model-side
// failure into a tool outcome. req is not modified.
func (m *Model) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return react.Response{}, classify(err, nil) // never sent: modelerr.Request
	}
	var resp *http.Response
	opts := make([]option.RequestOption, 0, 2+len(m.opts.RequestOptions))
	opts = append(opts, option.WithMaxRetries(m.opts.MaxRetries), option.WithResponseInto(&resp))
	opts = append(opts, m.opts.RequestOptions...)
	completion, err := m.client.Chat.Completions.New(ctx, params, opts...)
	if err != nil {
		return react.Response{}, classify(err, resp)
	}
	out, err := fromCompletion(completion)
	if err != nil {
		return react.Response{}, classify(err, resp) // a 2xx body: modelerr.Malformed
	}
	return out, nil
}

// params builds the request body.
func (m *Model) params(req react.Request) (sdk.ChatCompletionNewParams, error) {
	msgs, err := toMessages(req.Messages)
	if err != nil {
		return sdk.ChatCompletionNewParams{}, err
	}
	tools, err := toTools(req.Tools)
	if err != nil {
		return sdk.ChatCompletionNewParams{}, err
	}
	p := sdk.ChatCompletionNewParams{Model: m.model, Messages: msgs, Tools: tools}
	if m.opts.Temperature != nil {
		p.Temperature = sdk.Float(*m.opts.Temperature)
	}
	if m.opts.TopP != nil {
		p.TopP = sdk.Float(*m.opts.TopP)
	}
	if m.opts.MaxTokens > 0 {
		p.MaxCompletionTokens = sdk.Int(m.opts.MaxTokens)
	}
	return p, nil
}

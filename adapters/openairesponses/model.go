package openairesponses

import (
	"context"
	"errors"
	"net/http"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// Provider is the provider name [Model.Describe] reports by default.
const Provider = "openai"

// API names this adapter's wire format in [react.Part].API: the
// reasoning items it keeps are sent back only by it.
const API = "openai.responses"

// Options configures a [Model]. The zero value (and nil) means defaults.
type Options struct {
	// Temperature and TopP are the sampling parameters; nil leaves them to
	// the API (reasoning models refuse them).
	Temperature *float64
	TopP        *float64
	// MaxTokens bounds the tokens of one turn, reasoning included
	// (max_output_tokens); 0 leaves it to the API. A response that
	// reaches it is incomplete for max_output_tokens, and the loop runs
	// none of its calls (react.CutOff).
	MaxTokens int64
	// MaxRetries is how many times the SDK itself retries a failed
	// request; 0 (the default) leaves the decision to the host, which
	// holds the snapshot. Negative values count as 0.
	MaxRetries int
	// Provider is the provider [Model.Describe] reports; "" means
	// [Provider].
	Provider string
	// NoStream makes [Model.GenerateStream] return nil, so that the loop
	// asks with [Model.Generate].
	NoStream bool
	// Store asks the API to keep the responses (store: true). By default
	// it keeps none (store: false) and the adapter sends the whole
	// history every turn, the reasoning items included as encrypted
	// content, so that no previous_response_id is needed and a snapshot
	// resumes on any server.
	Store bool
	// RequestOptions are appended to every request after the adapter's
	// own, e.g. option.WithJSONSet("reasoning", map[string]any{"effort":
	// "low"}).
	RequestOptions []option.RequestOption
}

// Model is a [react.Model] and [react.StreamModel] on the OpenAI
// Responses API.
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
	_ react.Model       = (*Model)(nil)
	_ react.StreamModel = (*Model)(nil)
	_ react.Describer   = (*Model)(nil)
)

// New returns a Model that sends requests through client to the named
// model (e.g. "gpt-5", "o4-mini"). opts may be nil.
//
// New panics if model is empty: a programming error.
func New(client sdk.Client, model string, opts *Options) *Model {
	if model == "" {
		panic("openairesponses: New with an empty model name")
	}
	m := &Model{client: client, model: model}
	if opts != nil {
		m.opts = *opts
		m.opts.RequestOptions = append([]option.RequestOption(nil), opts.RequestOptions...)
	}
	m.opts.MaxRetries = max(m.opts.MaxRetries, 0)
	set := modelkit.Settings{Provider: m.opts.Provider, Temperature: m.opts.Temperature, TopP: m.opts.TopP, MaxTokens: m.opts.MaxTokens}
	m.info = set.Info(Provider, model, baseURL(client), true)
	return m
}

// errProbe stops the request baseURL builds before it is sent.
var errProbe = errors.New("openairesponses: probe")

// baseURL is the URL the client sends requests to, as its options resolve
// it; a request built with them is stopped by a middleware before it is
// sent. "" when the SDK refuses to build it.
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

// Describe implements [react.Describer]: the provider, the model, the
// host and port of the client's base URL, the request parameters set in
// Options, and SystemApart (the system messages are the request's
// instructions).
func (m *Model) Describe() react.ModelInfo { return m.info }

// Generate sends the history and tool specs as one Responses API request
// and returns the response's text, function calls and reasoning items.
//
// Every failure is a [*modelerr.Error]: HTTP errors, transport errors,
// deadlines, a response that failed (status failed), and bodies that do
// not decode. req is not modified.
func (m *Model) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return react.Response{}, classify(err, nil)
	}
	var resp *http.Response
	opts := m.requestOptions(option.WithResponseInto(&resp))
	r, err := m.client.Responses.New(ctx, params, opts...)
	if err != nil {
		return react.Response{}, classify(err, resp)
	}
	out, err := fromJSON([]byte(r.RawJSON()))
	if err != nil {
		if e := asModelErr(err); e != nil {
			return react.Response{}, e // a failed response
		}
		return react.Response{}, classify(err, resp) // a 2xx body: modelerr.Malformed
	}
	return out, nil
}

// requestOptions are the options of every request: no SDK retries unless
// asked, extra, then the host's.
func (m *Model) requestOptions(extra ...option.RequestOption) []option.RequestOption {
	opts := make([]option.RequestOption, 0, 1+len(extra)+len(m.opts.RequestOptions))
	opts = append(opts, option.WithMaxRetries(m.opts.MaxRetries))
	opts = append(opts, extra...)
	return append(opts, m.opts.RequestOptions...)
}

// params builds the request body.
func (m *Model) params(req react.Request) (responses.ResponseNewParams, error) {
	system, input, err := toInput(req.Messages, m.opts.Store)
	if err != nil {
		return responses.ResponseNewParams{}, err
	}
	tools, err := toTools(req.Tools)
	if err != nil {
		return responses.ResponseNewParams{}, err
	}
	p := responses.ResponseNewParams{
		Model: m.model,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
		Tools: tools,
		Store: param.NewOpt(m.opts.Store),
	}
	if !m.opts.Store {
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	if len(system) > 0 {
		p.Instructions = param.NewOpt(strings.Join(system, "\n\n"))
	}
	if t := m.opts.Temperature; t != nil {
		p.Temperature = param.NewOpt(*t)
	}
	if t := m.opts.TopP; t != nil {
		p.TopP = param.NewOpt(*t)
	}
	if m.opts.MaxTokens > 0 {
		p.MaxOutputTokens = param.NewOpt(m.opts.MaxTokens)
	}
	return p, nil
}

// classify is where every failure becomes a [*modelerr.Error], by the
// shared rules of [modelerr.Classify]: the response of the SDK's
// *openai.Error when there is one, with its error type; otherwise resp,
// nil when no response arrived. The messages start with
// "openairesponses: ".
func classify(err error, resp *http.Response) *modelerr.Error {
	if apiErr, ok := errors.AsType[*sdk.Error](err); ok && apiErr.Response != nil {
		return modelerr.Classify(name, err, apiErr.Response, apiErr.Type)
	}
	return modelerr.Classify(name, err, resp, "")
}

// name is the provider of this adapter's errors.
const name = "openairesponses"

package bedrock

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/reactguard/reactguard/modelkit"
	"github.com/reactguard/reactguard/react"
)

// Provider is the provider name [Model.Describe] reports by default, as
// the OpenTelemetry GenAI conventions name it.
const Provider = "aws.bedrock"

// API names this adapter's wire format in [react.Part].API: the
// reasoning blocks it keeps are sent back only by it.
const API = "bedrock.converse"

// name is the provider of this adapter's errors.
const name = "bedrock"

// Options configures a [Model]. The zero value (and nil) means defaults.
type Options struct {
	// Temperature and TopP are the sampling parameters; nil leaves them to
	// the model.
	Temperature *float64
	TopP        *float64
	// MaxTokens bounds the tokens of one turn (inferenceConfig.maxTokens);
	// 0 leaves it to the model. A turn that reaches it stops for
	// max_tokens, and the loop runs none of its calls (react.CutOff).
	MaxTokens int64
	// MaxRetries is how many times the SDK itself retries a failed
	// request; 0 (the default) leaves the decision to the host, which
	// holds the snapshot. Negative values count as 0.
	MaxRetries int
	// Provider is the provider [Model.Describe] reports; "" means
	// [Provider].
	Provider string
	// NoStream makes [Model.GenerateStream] return nil, so that the loop
	// asks with [Model.Generate] (Converse rather than ConverseStream).
	NoStream bool
}

// Model is a [react.Model] and [react.StreamModel] on the Amazon Bedrock
// Converse API.
//
// A Model is immutable after [New] and safe for concurrent use by many
// loops; it holds no conversation state.
type Model struct {
	client *bedrockruntime.Client
	model  string
	opts   Options
	info   react.ModelInfo
}

var (
	_ react.Model       = (*Model)(nil)
	_ react.StreamModel = (*Model)(nil)
	_ react.Describer   = (*Model)(nil)
)

// New returns a Model that sends requests through client to the model or
// inference profile id (e.g. "us.anthropic.claude-haiku-4-5-20251001-v1:0",
// "amazon.nova-lite-v1:0"). opts may be nil.
//
// New panics if client is nil or model is empty: programming errors.
func New(client *bedrockruntime.Client, model string, opts *Options) *Model {
	if client == nil {
		panic("bedrock: New with a nil client")
	}
	if model == "" {
		panic("bedrock: New with an empty model id")
	}
	m := &Model{client: client, model: model}
	if opts != nil {
		m.opts = *opts
	}
	m.opts.MaxRetries = max(m.opts.MaxRetries, 0)
	o := client.Options()
	base := aws.ToString(o.BaseEndpoint)
	if base == "" && o.Region != "" {
		base = "https://bedrock-runtime." + o.Region + ".amazonaws.com"
		if strings.HasPrefix(o.Region, "cn-") {
			base += ".cn"
		}
	}
	set := modelkit.Settings{Provider: m.opts.Provider, Temperature: m.opts.Temperature, TopP: m.opts.TopP, MaxTokens: m.opts.MaxTokens}
	m.info = set.Info(Provider, model, base, true)
	return m
}

// Name returns the model id requests are sent with.
func (m *Model) Name() string { return m.model }

// Describe implements [react.Describer]: the provider, the model id, the
// host and port of the client's endpoint (its BaseEndpoint, else the
// region's), the request parameters set in Options, and SystemApart (the
// system messages are the request's system blocks).
func (m *Model) Describe() react.ModelInfo { return m.info }

// retries sets the SDK's attempts of one call: 1 + Options.MaxRetries.
func (m *Model) retries(o *bedrockruntime.Options) { o.RetryMaxAttempts = 1 + m.opts.MaxRetries }

// Generate sends the history and tool specs as one Converse request and
// returns the message's text and toolUse blocks.
//
// Every failure is a [*modelerr.Error]: HTTP errors and the API's
// exceptions, transport errors, deadlines, and responses that do not
// decode or carry no message. req is not modified.
func (m *Model) Generate(ctx context.Context, req react.Request) (react.Response, error) {
	in, err := m.input(req)
	if err != nil {
		return react.Response{}, requestErr(err)
	}
	out, err := m.client.Converse(ctx, in, m.retries)
	if err != nil {
		return react.Response{}, classify(ctx, err)
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return react.Response{}, malformed("the response has no message")
	}
	t := turn{}
	for _, b := range msg.Value.Content {
		if err := t.block(b); err != nil {
			return react.Response{}, malformed("%w", err)
		}
	}
	resp := t.response()
	resp.FinishReason = string(out.StopReason)
	resp.Usage = usage(out.Usage)
	resp.ID = requestID(out.ResultMetadata)
	return resp, nil
}

// input builds a Converse request.
func (m *Model) input(req react.Request) (*bedrockruntime.ConverseInput, error) {
	system, msgs, err := toMessages(req.Messages)
	if err != nil {
		return nil, err
	}
	tools, err := toTools(req.Tools)
	if err != nil {
		return nil, err
	}
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(m.model), Messages: msgs, System: system, ToolConfig: tools}
	var ic types.InferenceConfiguration
	set := false
	if t := m.opts.Temperature; t != nil {
		ic.Temperature, set = aws.Float32(float32(*t)), true
	}
	if t := m.opts.TopP; t != nil {
		ic.TopP, set = aws.Float32(float32(*t)), true
	}
	if m.opts.MaxTokens > 0 {
		ic.MaxTokens, set = aws.Int32(int32(min(m.opts.MaxTokens, 1<<31-1))), true
	}
	if set {
		in.InferenceConfig = &ic
	}
	return in, nil
}

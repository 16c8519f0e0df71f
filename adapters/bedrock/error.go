package bedrock

import (
	"context"
	"errors"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/modelkit"
)

// classify is where every failure becomes a [*modelerr.Error], by the
// shared rules of [modelerr.Classify]: the HTTP response of the SDK's
// ResponseError (status and Retry-After) when there is one, and the
// exception the API named (errorType), which wins over the status:
// ThrottlingException and ServiceQuotaExceededException are a rate
// limit, ServiceUnavailableException and ModelNotReadyException an
// overload. A deserialization failure of a 2xx body is
// [modelerr.Malformed]. The messages start with "bedrock: ".
func classify(ctx context.Context, err error) *modelerr.Error {
	var resp *http.Response
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		resp = re.Response.Response
	}
	var de *smithy.DeserializationError
	if errors.As(err, &de) && ctx.Err() == nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		if status < 400 {
			e := malformed("%w", err)
			return e
		}
	}
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	return modelerr.Classify(name, err, resp, errorType(code))
}

// errorType maps an exception's code to the error type the shared rules
// know.
func errorType(code string) string {
	switch code {
	case "ThrottlingException", "ServiceQuotaExceededException", "throttlingException", "serviceQuotaExceededException":
		return "rate_limit_error"
	case "ServiceUnavailableException", "ModelNotReadyException", "serviceUnavailableException":
		return "overloaded_error"
	}
	return ""
}

// inBand classifies an exception the API sent inside a stream (an
// exception message of the event stream): a rate limit or an overload by
// its code, a validation error as Request, any other (internalServer,
// modelStreamError) as the server's failure.
func inBand(err error) *modelerr.Error {
	var ae smithy.APIError
	code, msg := "", err.Error()
	if errors.As(err, &ae) {
		code, msg = ae.ErrorCode(), ae.ErrorMessage()
	}
	e := modelkit.InBand(name, errorType(code), "", msg)
	switch code {
	case "ValidationException", "validationException":
		e.Kind = modelerr.Request
	case "AccessDeniedException", "accessDeniedException":
		e.Kind = modelerr.Auth
	}
	e.Err = err
	return e
}

// requestErr is the error of a request the adapter could not build:
// [modelerr.Request], nothing sent.
func requestErr(err error) *modelerr.Error {
	return &modelerr.Error{Provider: name, Kind: modelerr.Request, Err: err}
}

func malformed(format string, args ...any) *modelerr.Error {
	return modelkit.Malformed(name, format, args...)
}

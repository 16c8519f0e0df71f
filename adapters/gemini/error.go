package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/reactguard/reactguard/modelerr"
	"github.com/reactguard/reactguard/modelkit"
)

// classify is where every failure of a request becomes a
// [*modelerr.Error], by the shared rules of [modelerr.Classify]. The SDK
// does not hand out the HTTP response of a failure; its genai.APIError
// carries the status code, the status name (RESOURCE_EXHAUSTED,
// UNAVAILABLE, …) and the details, whose google.rpc.RetryInfo gives the
// wait ([modelerr.Error.RetryAfter]). A 2xx body that does not decode is
// [modelerr.Malformed]; an error without a response is a transport
// failure (Unreachable, Timeout, Canceled) or a request the SDK would not
// build ([modelerr.Request]). The messages start with "gemini: ".
func classify(ctx context.Context, err error) *modelerr.Error {
	var apiErr genai.APIError
	if errors.As(err, &apiErr) && apiErr.Code >= 400 {
		resp := &http.Response{StatusCode: apiErr.Code, Header: http.Header{}}
		if d := retryDelay(apiErr.Details); d > 0 {
			resp.Header.Set("Retry-After-Ms", strconv.FormatInt(d.Milliseconds(), 10))
		}
		return modelerr.Classify(API, err, resp, errorType(apiErr.Status))
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = errors.Join(err, cerr)
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		if ctx.Err() == nil {
			return malformed("%w", err)
		}
	}
	return modelerr.Classify(API, err, nil, "")
}

// errorType maps a google.rpc status name to the error type the shared
// rules know: RESOURCE_EXHAUSTED is a rate limit whatever the status
// code; UNAVAILABLE an overload.
func errorType(status string) string {
	switch status {
	case "RESOURCE_EXHAUSTED":
		return "rate_limit_error"
	case "UNAVAILABLE":
		return "overloaded_error"
	}
	return ""
}

// inBand classifies an error the API sent inside a stream (a data line
// holding {"error": …}, with HTTP 200) by its status name and code.
func inBand(e genai.APIError) *modelerr.Error {
	out := modelkit.InBand(API, errorType(e.Status), strings.ToLower(e.Status), e.Message)
	switch {
	case e.Status == "INVALID_ARGUMENT" || e.Status == "NOT_FOUND" || e.Status == "FAILED_PRECONDITION":
		out.Kind = modelerr.Request
	case e.Status == "PERMISSION_DENIED" || e.Status == "UNAUTHENTICATED":
		out.Kind = modelerr.Auth
	case e.Code == http.StatusTooManyRequests:
		out.Kind = modelerr.RateLimited
	}
	out.RetryAfter = retryDelay(e.Details)
	out.Err = e
	return out
}

// retryDelay reads google.rpc.RetryInfo's retryDelay ("27s", "1.5s") out
// of an error's details; 0 when there is none.
func retryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		s, _ := d["retryDelay"].(string)
		if v, err := time.ParseDuration(s); err == nil && v > 0 {
			return v
		}
	}
	return 0
}

func malformed(format string, args ...any) *modelerr.Error {
	return modelkit.Malformed(API, format, args...)
}

// requestErr is the error of a request the adapter could not build (a
// tool schema that is not an object, a tool result without a call id):
// [modelerr.Request], nothing sent.
func requestErr(err error) *modelerr.Error {
	return &modelerr.Error{Provider: API, Kind: modelerr.Request, Err: err}
}

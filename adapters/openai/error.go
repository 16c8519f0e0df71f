package openai

import (
	"errors"
	"net/http"

	sdk "github.com/openai/openai-go/v3"

	"github.com/reactguard/reactguard/modelerr"
)

// classify is where every failure of [Model.Generate] becomes a
// [*modelerr.Error], by the shared rules of [modelerr.Classify]: a request
// that could not be built (resp nil, so [modelerr.Request]), a failed
// call, a 2xx body that did not convert ([modelerr.Malformed]). The only
// SDK-specific part is the extraction: the response of the SDK's
// *openai.Error when there is one (the SDK always sets it) and the error
// type its body named; otherwise resp, the last HTTP response the SDK saw
// (a 502 whose HTML body the SDK could not decode still has one), nil
// when none arrived. The messages start with "openai: ".
func classify(err error, resp *http.Response) *modelerr.Error {
	if apiErr, ok := errors.AsType[*sdk.Error](err); ok && apiErr.Response != nil {
		return modelerr.Classify("openai", err, apiErr.Response, apiErr.Type)
	}
	return modelerr.Classify("openai", err, resp, "")
}

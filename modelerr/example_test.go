package modelerr_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/reactguard/reactguard/modelerr"
)

func ExampleKindOf() {
	// What loop.Run returns when the model was rate limited: the adapter's
	// *modelerr.Error, wrapped by the loop.
	err := fmt.Errorf("react: model: %w", &modelerr.Error{
		Provider: "openai", Kind: modelerr.RateLimited, StatusCode: 429,
		RetryAfter: 2 * time.Second, Err: errors.New("rate limit reached"),
	})

	switch k := modelerr.KindOf(err); {
	case k.Retryable():
		var e *modelerr.Error
		if errors.As(err, &e) {
			fmt.Printf("retryable %s: wait %v, then resume the snapshot\n", k, e.RetryAfter)
		}
	default:
		fmt.Println("give up:", k)
	}

	// Context errors need no adapter.
	fmt.Println(modelerr.KindOf(context.DeadlineExceeded), modelerr.KindOf(nil))
	// Output:
	// retryable rate_limited: wait 2s, then resume the snapshot
	// timeout unknown
}

func ExampleClassify() {
	// An adapter pulls the HTTP response and the body's error type out of
	// its SDK's error; Classify applies the shared rules.
	resp := &http.Response{StatusCode: 529, Header: http.Header{}}
	resp.Header.Set("Retry-After", "30")
	sdkErr := errors.New(`529 {"type":"error","error":{"type":"overloaded_error"}}`)

	e := modelerr.Classify("anthropic", sdkErr, resp, "overloaded_error")
	fmt.Println(e.Kind, e.Kind.Retryable(), e.RetryAfter)
	fmt.Println(errors.Is(e, sdkErr))

	// No response and no transport error: the SDK never sent the request.
	fmt.Println(modelerr.Classify("openai", errors.New("bad base URL"), nil, ""))
	// Output:
	// overloaded true 30s
	// true
	// openai: request: bad base URL
}

func ExampleKindOfStatus() {
	fmt.Println(modelerr.KindOfStatus(429, ""))
	fmt.Println(modelerr.KindOfStatus(500, "overloaded_error"))
	fmt.Println(modelerr.KindOfStatus(404, ""))
	// Output:
	// rate_limited
	// overloaded
	// request
}

func ExampleRetryAfter() {
	now := time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("Retry-After", "Wed, 21 Oct 2015 07:28:30 GMT")
	fmt.Println(modelerr.RetryAfter(h, now))
	fmt.Println(modelerr.RetryAfter(h, time.Time{})) // no now: the date form is ignored

	h.Set("Retry-After-Ms", "1500")
	fmt.Println(modelerr.RetryAfter(h, now))
	// Output:
	// 30s
	// 0s
	// 1.5s
}

func ExampleKind_Retryable() {
	for _, k := range []modelerr.Kind{modelerr.Overloaded, modelerr.Auth} {
		fmt.Printf("%s retryable=%v\n", k, k.Retryable())
	}
	// Output:
	// overloaded retryable=true
	// auth retryable=false
}

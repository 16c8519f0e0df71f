package modelkit

import (
	"net"
	"net/url"
	"strconv"

	"github.com/reactguard/reactguard/react"
)

// Settings are the options every adapter shares. The zero value means
// defaults: the adapter's provider name, parameters left to the API.
type Settings struct {
	// Provider is the provider the adapter reports (telemetry's
	// gen_ai.provider.name); "" means the adapter's default.
	Provider string
	// Temperature and TopP are the sampling parameters; nil leaves them
	// to the API.
	Temperature *float64
	TopP        *float64
	// MaxTokens bounds the tokens of one turn; 0 leaves it to the API
	// (or to the adapter's default where the API requires one).
	MaxTokens int64
}

// Info returns the [react.ModelInfo] of an adapter: the provider (s's, or
// def), the model name, the endpoint of baseURL ([Endpoint]), the
// request parameters, and whether the API takes the system instructions
// apart from the history (systemApart).
func (s Settings) Info(def, model, baseURL string, systemApart bool) react.ModelInfo {
	p := s.Provider
	if p == "" {
		p = def
	}
	host, port := Endpoint(baseURL)
	return react.ModelInfo{
		Provider: p, Name: model, ServerAddress: host, ServerPort: port,
		Temperature: s.Temperature, TopP: s.TopP, MaxTokens: s.MaxTokens, SystemApart: systemApart,
	}
}

// Endpoint returns the host and port of a base URL, the port defaulting
// to the scheme's (443 for https, 80 for http); "" and 0 for a URL that
// does not parse or has no host.
func Endpoint(baseURL string) (host string, port int) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return "", 0
	}
	host = u.Hostname()
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return host, 0
		}
		return host, n
	}
	switch u.Scheme {
	case "https", "wss":
		return host, 443
	case "http", "ws":
		return host, 80
	}
	if _, p, err := net.SplitHostPort(u.Host); err == nil && p != "" {
		n, _ := strconv.Atoi(p)
		return host, n
	}
	return host, 0
}

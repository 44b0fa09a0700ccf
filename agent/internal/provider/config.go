package provider

import (
	"net/http"

	"github.com/mcpwasm/mcpwasm/agent"
	"github.com/mcpwasm/mcpwasm/mcperr"
)

// CheckConfig makes the checks every adapter's New makes, errors prefixed
// with name: the base URL (def when base is empty) is an http(s) URL, a
// model is named (example shows one), and an HTTP client is given. It
// returns the base URL to use.
func CheckConfig(name, base, def, model, example string, hc *http.Client) (string, error) {
	if base == "" {
		base = def
	}
	if err := CheckBaseURL(name, base); err != nil {
		return "", err
	}
	if model == "" {
		return "", mcperr.New(mcperr.InvalidArgument, "%s: Config.Model is required (e.g. %s)", name, example)
	}
	if hc == nil {
		return "", mcperr.New(mcperr.InvalidArgument, "%s: Config.HTTPClient is required (in a browser, one that wraps http.DefaultTransport)", name)
	}
	return base, nil
}

// CheckKey refuses a missing API key for the provider's own API at def; a
// proxy at another base URL may add the key itself.
func CheckKey(name string, key agent.Secret, base, def string) error {
	if key.IsZero() && Endpoint(base, "") == def {
		return mcperr.New(mcperr.InvalidArgument, "%s: Config.APIKey is required for %s (or set BaseURL to a proxy that adds it)", name, def)
	}
	return nil
}

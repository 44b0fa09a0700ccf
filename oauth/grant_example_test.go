package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"os"
	"strings"

	"github.com/mcpwasm/mcpwasm/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A service signs in by itself with the client credentials grant
// (private_key_jwt here); no user, no Courier, no redirect URL.
func ExampleClientCredentials() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader) // in practice: the registered key
	h, err := oauth.New(oauth.Config{
		ResourceURL:       "https://mcp.example.com/mcp",
		HTTPClient:        &http.Client{Transport: http.DefaultTransport},
		ClientID:          "reporting-service",
		ClientCredentials: &oauth.ClientCredentials{PrivateKey: key},
	})
	if err != nil {
		panic(err)
	}
	_ = &mcp.StreamableClientTransport{Endpoint: h.Resource(), OAuthHandler: h}
}

// A workload presents the credential its platform issued (here read from a
// file the platform mounts) in the JWT bearer grant.
func ExampleWorkloadIdentity() {
	h, err := oauth.New(oauth.Config{
		ResourceURL: "https://mcp.example.com/mcp",
		HTTPClient:  &http.Client{Transport: http.DefaultTransport},
		WorkloadIdentity: &oauth.WorkloadIdentity{Assertion: func(context.Context) (string, error) {
			b, err := os.ReadFile("/var/run/secrets/tokens/mcp")
			return strings.TrimSpace(string(b)), err
		}},
	})
	if err != nil {
		panic(err)
	}
	_ = &mcp.StreamableClientTransport{Endpoint: h.Resource(), OAuthHandler: h}
}

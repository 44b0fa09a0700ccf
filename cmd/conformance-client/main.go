// Command conformance-client is an MCP client for the official conformance
// suite (@modelcontextprotocol/conformance), built on package oauth. The
// suite runs it with the server URL as the last argument and the scenario
// in MCP_CONFORMANCE_SCENARIO (context JSON in MCP_CONFORMANCE_CONTEXT).
//
// Its Courier GETs the authorization URL without following the redirect
// and delivers the Location header to the flow registry, as a browser's
// callback page would. After connecting it performs the scenario's steps
// (devkit/confsteps), accepting every elicitation.
package main

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/mcpwasm/mcpwasm/devkit/confsteps"
	"github.com/mcpwasm/mcpwasm/mcpclient"
	"github.com/mcpwasm/mcpwasm/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: conformance-client <server-url>")
	}
	serverURL := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var cctx map[string]any
	if s := os.Getenv("MCP_CONFORMANCE_CONTEXT"); s != "" {
		if err := json.Unmarshal([]byte(s), &cctx); err != nil {
			log.Fatalf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, scenario, serverURL, cctx); err != nil {
		log.Fatalf("scenario %q: %v", scenario, err)
	}
}

func run(ctx context.Context, scenario, serverURL string, cctx map[string]any) error {
	httpClient := &http.Client{Transport: http.DefaultTransport, Timeout: 20 * time.Second}
	reg := oauth.NewRegistry()
	courier := oauth.CourierFunc(func(ctx context.Context, authURL string) error {
		c := &http.Client{
			Transport:     http.DefaultTransport,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if loc == "" {
			return fmt.Errorf("authorization endpoint answered %d without a redirect", resp.StatusCode)
		}
		// Deliver asynchronously, as a callback page would.
		go func() {
			if err := reg.Deliver(loc); err != nil {
				log.Printf("deliver: %v", err)
			}
		}()
		return nil
	})
	cfg := oauth.Config{
		ResourceURL:         serverURL,
		HTTPClient:          httpClient,
		RedirectURL:         "http://localhost:3000/callback",
		ClientName:          "mcpwasm conformance client",
		ClientMetadataURL:   "https://conformance-test.local/client-metadata.json",
		Registry:            reg,
		Courier:             courier,
		Interactive:         true,
		RequestRefreshToken: true,
		OnEvent: func(e oauth.Event) {
			if e.Err != nil {
				log.Printf("oauth event %s %s: %v", e.Kind, e.State, e.Err)
			} else {
				log.Printf("oauth event %s %s", e.Kind, e.State)
			}
		},
	}
	if id, ok := cctx["client_id"].(string); ok {
		cfg.ClientID = id
		cfg.ClientSecret, _ = cctx["client_secret"].(string)
	}
	if err := grantFor(scenario, cctx, &cfg); err != nil {
		return err
	}
	h, err := oauth.New(cfg)
	if err != nil {
		return err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpwasm-conformance-client", Version: "0.1.0"}, &mcp.ClientOptions{
		// Accept without filling anything in: go-sdk applies the schema's
		// defaults (SEP-1034) and answers multi-round-trip requests.
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
	})
	// The MCP requests go through the handler's ResourceTransport, which
	// presents a DPoP-bound token (Config.DPoP is auto) with a proof.
	mcpHTTP := &http.Client{Transport: h.ResourceTransport(http.DefaultTransport), Timeout: httpClient.Timeout}
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: serverURL, HTTPClient: mcpHTTP, OAuthHandler: h}, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer session.Close()
	var tools []*mcp.Tool
	var skills *mcpclient.Client
	for _, st := range confsteps.For(scenario, cctx) {
		var err error
		switch st.Op {
		case confsteps.ListSkills, confsteps.LoadSkill, confsteps.ReadSkillFile:
			// go-sdk has no Skills extension: mcpclient's, over a session
			// of its own.
			if skills == nil {
				if skills, err = mcpclient.New(serverURL, mcpclient.Options{HTTPClient: mcpHTTP, ClientName: "mcpwasm-conformance-client"}); err != nil {
					return err
				}
				defer skills.Close()
				if err := skills.Connect(ctx, mcpclient.ConnectOptions{}); err != nil {
					return fmt.Errorf("connect for the Skills steps: %w", err)
				}
			}
			err = doSkill(ctx, skills, st)
		default:
			err = do(ctx, session, st, &tools)
		}
		if st.Fails {
			if err == nil {
				return fmt.Errorf("%s %s: the client did it; it must refuse", st.Op, st.Name)
			}
			log.Printf("%s %s: refused as it must be: %v", st.Op, st.Name, err)
			continue
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("%s %s: %w", st.Op, st.Name, err)
		}
	}
	return nil
}

// doSkill performs a step of the Skills extension with c.
func doSkill(ctx context.Context, c *mcpclient.Client, st confsteps.Step) error {
	switch st.Op {
	case confsteps.ListSkills:
		skills, err := c.Skills(ctx)
		if err == nil {
			log.Printf("listSkills: %d skills", len(skills))
		}
		return err
	case confsteps.LoadSkill:
		_, err := c.LoadSkill(ctx, st.Name)
		return err
	default:
		file, _ := st.Args["file"].(string)
		_, err := c.ReadSkillFile(ctx, st.Name, file)
		return err
	}
}

// do performs one step; tools is what the last ListTools returned.
func do(ctx context.Context, s *mcp.ClientSession, st confsteps.Step, tools *[]*mcp.Tool) error {
	switch st.Op {
	case confsteps.ListTools:
		res, err := s.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		*tools = res.Tools
		return nil
	case confsteps.CallTool:
		args := st.Args
		if st.SchemaOf != "" {
			i := slices.IndexFunc(*tools, func(t *mcp.Tool) bool { return t.Name == st.SchemaOf })
			if i < 0 {
				return fmt.Errorf("tool %q was not listed", st.SchemaOf)
			}
			args = map[string]any{"schema": (*tools)[i].InputSchema}
		}
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: st.Name, Arguments: args})
		if err == nil {
			log.Printf("callTool %s: isError=%v", st.Name, res.IsError)
		}
		return err
	case confsteps.ListResources:
		_, err := s.ListResources(ctx, nil)
		return err
	case confsteps.ReadResource:
		_, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: st.Name})
		return err
	case confsteps.ListPrompts:
		_, err := s.ListPrompts(ctx, nil)
		return err
	case confsteps.GetPrompt:
		args := map[string]string{}
		for k, v := range st.Args {
			args[k] = fmt.Sprint(v)
		}
		_, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: st.Name, Arguments: args})
		return err
	}
	return fmt.Errorf("unknown step %q", st.Op)
}

// grantFor configures the non-interactive grant of the extension
// scenarios that ask for one (client credentials, workload identity,
// enterprise-managed authorization) from the scenario's context; other
// scenarios keep the authorization code flow.
func grantFor(scenario string, cctx map[string]any, cfg *oauth.Config) error {
	str := func(k string) string { s, _ := cctx[k].(string); return s }
	switch scenario {
	case "auth/client-credentials-basic":
		cfg.ClientCredentials = &oauth.ClientCredentials{}
	case "auth/client-credentials-jwt":
		block, _ := pem.Decode([]byte(str("private_key_pem")))
		if block == nil {
			return errors.New("context private_key_pem: no PEM block")
		}
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return fmt.Errorf("context private_key_pem: %w", err)
		}
		signer, ok := k.(crypto.Signer)
		if !ok {
			return errors.New("context private_key_pem: not a signing key")
		}
		cfg.ClientCredentials = &oauth.ClientCredentials{PrivateKey: signer}
	case "auth/wif-jwt-bearer":
		jwt := str("valid_jwt")
		cfg.WorkloadIdentity = &oauth.WorkloadIdentity{Assertion: func(context.Context) (string, error) { return jwt, nil }}
	case "auth/enterprise-managed-authorization":
		idToken := str("idp_id_token")
		cfg.EnterpriseAuth = &oauth.EnterpriseAuth{
			IdentityAssertion: func(context.Context) (string, error) { return idToken, nil },
			IdPTokenEndpoint:  str("idp_token_endpoint"),
			IdPIssuer:         str("idp_issuer"),
			IdPClientID:       str("idp_client_id"),
		}
	default:
		return nil
	}
	cfg.ClientMetadataURL = "" // the authorization code flow's
	return nil
}

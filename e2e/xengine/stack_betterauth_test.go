package xengine

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The Better Auth stack (e2e/stacks/better-auth): Better Auth with its
// OAuth 2.1 provider and MCP plugins as their docs set them up (dynamic
// registration open, jwt(), an in-memory database, a login and a consent
// page), and its MCP endpoint (the TypeScript SDK 2.x server, 2026-07-28
// only) behind requireMcpAuth, on one loopback origin over plain http.
func init() {
	stacks = append(stacks, stack{name: "better-auth", start: startBetterAuth})
}

func startBetterAuth(t testing.TB, pageOrigin string) *stackServer {
	t.Helper()
	dir := stackDir(t, "better-auth")
	port := reservePort(t)
	p := startStackProc(t, "better-auth", dir, []string{
		"PORT=" + strconv.Itoa(port),
		"PAGE_ORIGIN=" + pageOrigin,
		"USERNAME=" + stackUser,
		"PASSWORD=" + stackPassword,
		"ACCESS_TOKEN_TTL=" + strconv.Itoa(int(stackTokenTTL/time.Second)),
	}, "better-auth listening", "node", filepath.Join(dir, "server.mjs"))
	return &stackServer{
		MCPURL:          "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp",
		Consent:         formConsent,
		TokenTTL:        stackTokenTTL,
		StepUp:          stackStepUpTool,
		Requests:        asRequests(p, "better-auth saw "),
		JWTAccessTokens: true,
		Facts:           "issuer with a path (/api/auth); registration takes a loopback http redirect only from a \"native\" client; JWT access tokens for the resource; DPoP offered; the MCP endpoint speaks 2026-07-28 only",
	}
}

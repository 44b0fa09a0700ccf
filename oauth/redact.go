package oauth

import (
	"fmt"
	"log/slog"
	"strings"
)

// The types that hold secrets print redacted with any fmt verb and in
// log/slog, because secrets must never reach logs, errors or events: a stray fmt.Printf("%+v", grant) or
// slog.Any("grant", grant) shows which secrets are present, never their
// values.

// redacted describes a secret without revealing it.
func redacted(s string) string {
	if s == "" {
		return `""`
	}
	return "[redacted]"
}

// String describes g with its secrets redacted.
func (g Grant) String() string {
	return fmt.Sprintf("oauth.Grant{Resource:%q Issuer:%q AccessToken:%s TokenType:%q RefreshToken:%s Expiry:%s Scopes:%q ClientID:%q ClientSecret:%s AuthMethod:%q}",
		g.Resource, g.Issuer, redacted(g.AccessToken), g.TokenType, redacted(g.RefreshToken), g.Expiry.Format("2006-01-02T15:04:05Z07:00"), g.Scopes, g.ClientID, redacted(g.ClientSecret), g.AuthMethod)
}

// Format implements fmt.Formatter: every verb prints [Grant.String].
func (g Grant) Format(f fmt.State, _ rune) { fmt.Fprint(f, g.String()) }

// LogValue implements slog.LogValuer.
func (g Grant) LogValue() slog.Value { return slog.StringValue(g.String()) }

// String describes c with its secret redacted.
func (c ClientRegistration) String() string {
	return fmt.Sprintf("oauth.ClientRegistration{Issuer:%q RedirectURI:%q ClientID:%q ClientSecret:%s AuthMethod:%q}",
		c.Issuer, c.RedirectURI, c.ClientID, redacted(c.ClientSecret), c.AuthMethod)
}

// Format implements fmt.Formatter: every verb prints [ClientRegistration.String].
func (c ClientRegistration) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// LogValue implements slog.LogValuer.
func (c ClientRegistration) LogValue() slog.Value { return slog.StringValue(c.String()) }

// String describes p with its state and verifier redacted.
func (p PendingFlow) String() string {
	return fmt.Sprintf("oauth.PendingFlow{State:%s Verifier:%s Resource:%q Issuer:%q ClientID:%q Expiry:%s}",
		redacted(p.State), redacted(p.Verifier), p.Resource, p.Issuer, p.ClientID, p.Expiry.Format("2006-01-02T15:04:05Z07:00"))
}

// Format implements fmt.Formatter: every verb prints [PendingFlow.String].
func (p PendingFlow) Format(f fmt.State, _ rune) { fmt.Fprint(f, p.String()) }

// LogValue implements slog.LogValuer.
func (p PendingFlow) LogValue() slog.Value { return slog.StringValue(p.String()) }

// String describes cb with its code and state redacted.
func (cb Callback) String() string {
	return fmt.Sprintf("oauth.Callback{State:%s Code:%s Iss:%q Error:%q ErrorDescription:%q}",
		redacted(cb.State), redacted(cb.Code), cb.Iss, cb.Error, cb.ErrorDescription)
}

// Format implements fmt.Formatter: every verb prints [Callback.String].
func (cb Callback) Format(f fmt.State, _ rune) { fmt.Fprint(f, cb.String()) }

// LogValue implements slog.LogValuer.
func (cb Callback) LogValue() slog.Value { return slog.StringValue(cb.String()) }

// redactSecrets replaces every occurrence of a secret in s (server-provided
// text such as an error_description that echoes the refresh token back).
func redactSecrets(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 && strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}

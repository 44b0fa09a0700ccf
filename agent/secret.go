package agent

import (
	"fmt"
	"log/slog"
	"strings"
)

// Redacted is what a [Secret] prints as.
const Redacted = "[redacted]"

// Secret holds an API key in memory. Every way of printing it — String,
// GoString, any fmt verb, slog, JSON — shows [Redacted]; only [Secret.Reveal]
// returns the value, and adapters call it when they build a request's
// headers. It is a struct around a pointer rather than a string type so
// that even fmt's reflection over an unexported field holding a Secret
// prints an address, never the key.
//
// The zero Secret is empty.
type Secret struct {
	v *string
}

// NewSecret returns a Secret holding s.
func NewSecret(s string) Secret {
	if s == "" {
		return Secret{}
	}
	return Secret{v: &s}
}

// Reveal returns the secret's value. Use it only to build a request.
func (s Secret) Reveal() string {
	if s.v == nil {
		return ""
	}
	return *s.v
}

// IsZero reports whether s is empty.
func (s Secret) IsZero() bool { return s.v == nil || *s.v == "" }

// String returns [Redacted], or "" for an empty secret.
func (s Secret) String() string {
	if s.IsZero() {
		return ""
	}
	return Redacted
}

// GoString returns a redacted Go syntax.
func (s Secret) GoString() string { return `agent.Secret("` + s.String() + `")` }

// Format prints the redacted form for every verb.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, s.GoString())
		return
	}
	fmt.Fprint(f, s.String())
}

// LogValue implements [slog.LogValuer].
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON writes the redacted form: a Secret never leaves in JSON.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// MarshalText writes the redacted form.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// minFragment is the shortest run of a secret's characters that
// [Secret.Redact] treats as a leak of part of it.
const minFragment = 8

// Redact returns text with the secret removed: every occurrence of its
// value, and every word that contains a run of at least 8 of its characters
// (a provider that echoes part of a key), becomes [Redacted].
func (s Secret) Redact(text string) string {
	key := s.Reveal()
	if key == "" || text == "" {
		return text
	}
	text = strings.ReplaceAll(text, key, Redacted)
	if len(key) < minFragment {
		return text
	}
	var b strings.Builder
	i := 0
	for i < len(text) {
		if !isKeyChar(text[i]) {
			b.WriteByte(text[i])
			i++
			continue
		}
		j := i
		for j < len(text) && isKeyChar(text[j]) {
			j++
		}
		word := text[i:j]
		if containsFragment(key, word) {
			b.WriteString(Redacted)
		} else {
			b.WriteString(word)
		}
		i = j
	}
	return b.String()
}

// isKeyChar reports whether c may be part of an API key.
func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '+' || c == '/' || c == '='
}

// containsFragment reports whether word holds a run of at least
// minFragment bytes that also occurs in key.
func containsFragment(key, word string) bool {
	for i := 0; i+minFragment <= len(word); i++ {
		if strings.Contains(key, word[i:i+minFragment]) {
			return true
		}
	}
	return false
}

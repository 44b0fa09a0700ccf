package provider

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/mcpwasm/mcpwasm/agent"
)

// Count reads a token count from a provider's JSON: a whole number from 0
// to [agent.MaxTokenCount]. Anything else (absent, null, a string, a
// fraction, a negative or absurd number) reads as 0: usage is shown to
// people, never trusted for a decision, so a bad count is dropped rather
// than failing the answer.
func Count(raw json.RawMessage) int {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == '"' || raw[0] == 'n' {
		return 0
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || f < 0 || f > agent.MaxTokenCount || f != math.Trunc(f) {
		return 0
	}
	return int(f)
}

// Counted reports whether raw holds a count [Count] accepts.
func Counted(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && (Count(raw) > 0 || string(raw) == "0")
}

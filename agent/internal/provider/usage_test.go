package provider

import (
	"encoding/json"
	"testing"
)

func TestCount(t *testing.T) {
	tests := []struct {
		raw     string
		want    int
		counted bool
	}{
		{`42`, 42, true},
		{` 7 `, 7, true},
		{`0`, 0, true},
		{`1e3`, 1000, true},
		{`1073741824`, 1 << 30, true},
		{`1073741825`, 0, false},
		{`-1`, 0, false},
		{`2.5`, 0, false},
		{`1e300`, 0, false},
		{`"12"`, 0, false},
		{`null`, 0, false},
		{`true`, 0, false},
		{`{}`, 0, false},
		{``, 0, false},
	}
	for _, tt := range tests {
		if got := Count(json.RawMessage(tt.raw)); got != tt.want {
			t.Errorf("Count(%s) = %d; want %d", tt.raw, got, tt.want)
		}
		if got := Counted(json.RawMessage(tt.raw)); got != tt.counted {
			t.Errorf("Counted(%s) = %v; want %v", tt.raw, got, tt.counted)
		}
	}
}

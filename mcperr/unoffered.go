package mcperr

// Unoffered is a request for a feature the server does not declare in
// its capabilities (completions, resource subscriptions): code protocol,
// and nothing was sent.
type Unoffered struct {
	Feature string // what the server lacks, as a noun: "completions"
	Next    string // what the page can do instead
}

func (e *Unoffered) Error() string {
	return "mcp: the server does not offer " + e.Feature + " (its capabilities do not declare them); " + e.Next
}

// MCPErrorCode implements [Coder].
func (e *Unoffered) MCPErrorCode() Code { return Protocol }

// UnofferedMessage is the message of an [Unoffered] error: {server} names
// the server, {feature} and {next} are the error's.
const UnofferedMessage = "{Server} does not offer {feature}. {Next}"

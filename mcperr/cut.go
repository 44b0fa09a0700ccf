package mcperr

// Cut is the cause of a request whose answer the connection ended in the
// middle of (the network dropped, or the server went away while it was
// sending): its code is [Network], and [Present] says the request reached
// the server and may have run there, which "could not be reached" would
// hide.
type Cut struct {
	Err error // what the read of the answer failed with
}

func (e *Cut) Error() string {
	return "the connection ended in the middle of the server's answer: " + e.Err.Error()
}

func (e *Cut) Unwrap() error { return e.Err }

// MCPErrorCode implements [Coder].
func (e *Cut) MCPErrorCode() Code { return Network }

// CutMessage is the message of a [Cut] error: {server} names the server.
const CutMessage = "The connection to {server} ended in the middle of its answer (the network or the server failed). The request reached the server and may have run there; check before repeating anything that changes data."

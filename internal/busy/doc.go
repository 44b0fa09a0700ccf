// Package busy sends a request again when its server answers that it is
// busy, as RFC 9110 lets it: 429 Too Many Requests (RFC 6585 §4) or 503
// Service Unavailable (RFC 9110 §15.6.4) mean the server did not act on
// the request, so even a POST may be sent again. A Retry-After (RFC 9110
// §10.2.3: seconds or an HTTP date) is waited out up to [Policy.MaxWait];
// a busy answer without one waits a short backoff with jitter. Waits end
// with the request's context, and the number of retries is bounded. The
// error that ends the retries is an *[mcperr.Busy], which says when to
// try again.
//
// [Policy.Transport] retries below an HTTP client, for requests whose body
// can be sent again ([http.Request.GetBody]); [Policy.Pause] is the wait
// alone, for callers that must rebuild each attempt themselves (a token
// request's DPoP proof is single-use, RFC 9449 §11.1). A request that
// failed without an answer (a network error) is not retried here: it may
// have reached the server.
//
// In a browser a cross-origin response's Retry-After is readable only
// when the server lists it in Access-Control-Expose-Headers; one that does
// not is read as a busy answer without Retry-After.
package busy

// Package provider is the HTTP side shared by the model adapters: it posts
// a request, retries a bounded number of times on 408, 409, 429 and 5xx
// (honouring Retry-After and retry-after-ms up to a cap), reads error
// bodies size-capped, and turns them into [agent.ProviderError]s whose
// messages are sanitised and free of the API key. It also holds the steps
// every adapter takes alike: the checks of a Config ([CheckConfig],
// [CheckKey]), the exchange of a request for its answer, read whole or
// streamed ([Client.Answer]), and the reading of a stream's JSON events
// ([ReadEvents]).
package provider

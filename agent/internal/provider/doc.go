// Package provider is the HTTP side shared by the model adapters: it posts
// a request, retries a bounded number of times on 408, 409, 429 and 5xx
// (honouring Retry-After and retry-after-ms up to a cap), reads error
// bodies size-capped, and turns them into [agent.ProviderError]s whose
// messages are sanitised and free of the API key.
package provider

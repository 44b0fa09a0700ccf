// "mcpwasm/callback": importing it makes the current page the OAuth
// redirect receiver (it relays the result to the page that started the
// sign-in, then closes the window). It exports nothing.
export {};

// Package webserve serves a directory of static web assets — the demo page,
// mcp.js, mcp.wasm, the OAuth callback page — the way a browser loading a
// large WebAssembly module wants them served.
//
// [Handler] differs from [net/http.FileServer] in four ways:
//
//   - Content types are fixed for the files this project ships
//     (application/wasm for .wasm, text/javascript for .js and .mjs) and are
//     never sniffed; every response carries X-Content-Type-Options: nosniff.
//   - Precompressed siblings (X.br, X.gz) are served in place of X when the
//     request's Accept-Encoding allows it (RFC 9110 §12.5.3, q-values
//     honoured, br preferred over gzip on a tie), with Content-Encoding set,
//     the Content-Type of X, and Vary: Accept-Encoding. A sibling older than
//     X is stale and ignored. The siblings are never served under their own
//     names.
//   - Every file gets a strong ETag derived from a SHA-256 of the bytes
//     actually sent (so each encoding has its own) and Cache-Control:
//     no-cache, so a reload revalidates and receives 304 Not Modified with no
//     body unless the file changed (RFC 9111 §5.2.2.4, RFC 9110 §13.1.2).
//     Hashes are computed once per file version, keyed on path, modification
//     time and size.
//     A file named after its content — stem-<hex>.ext where the
//     hashname.HashLen hex digits begin the SHA-256 of its bytes, as the
//     build's mcp-<hash>.wasm — gets [ImmutableCacheControl] instead:
//     another content gets another name, so a cached copy is never
//     revalidated. The digest is checked, so a file that only looks hashed
//     still revalidates. Its precompressed sibling goes out (immutable)
//     only when the manifest beside it (stem-<hex>.ext.sha256, written by
//     the build) lists the sibling's SHA-256; any other sibling may decode
//     to other bytes, so the original is sent instead.
//   - There are no directory listings: a directory is served through its
//     index.html or not at all, and names starting with a dot are hidden.
//
// Path traversal is impossible by construction: request paths are cleaned
// and resolved inside an [io/fs.FS], which rejects "..".
package webserve

// Package hashname is the one rule for content-hashed file names, shared by
// the build that writes them (devkit/webbuild) and the server that sends
// them immutable (devkit/webserve): a file named stem-<hex>.ext, where
// the [HashLen] hex digits begin the SHA-256 of its bytes, never changes
// under its name. A manifest beside it ([ManifestName], in sha256sum's
// format) records the digests of its precompressed siblings, which the
// build checked to decode to the file's bytes: a sibling is as immutable
// as its original only while its digest is the one recorded.
package hashname

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
)

// HashLen is the number of hex digits of SHA-256 in a hashed name: 64
// bits, plenty to tell builds apart.
const HashLen = 16

// hexRE is the hash part of a name.
var hexRE = `[0-9a-f]{` + strconv.Itoa(HashLen) + `}`

// nameRE matches a content-hashed name: a stem, a dash, HashLen lowercase
// hex digits, an extension.
var nameRE = regexp.MustCompile(`^.+-(` + hexRE + `)\.[A-Za-z0-9]+$`)

// Name is the content-hashed name of a file with these bytes:
// stem-<the first HashLen hex digits of their SHA-256><ext> (ext with its dot).
func Name(stem, ext string, b []byte) string {
	sum := sha256.Sum256(b)
	return stem + "-" + hex.EncodeToString(sum[:])[:HashLen] + ext
}

// Hash returns the hex digits a content-hashed base name carries, and
// whether it is one.
func Hash(base string) (string, bool) {
	m := nameRE.FindStringSubmatch(base)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// Matches reports whether base is a content-hashed name whose digits begin
// sum, the SHA-256 of the file's bytes.
func Matches(base string, sum []byte) bool {
	h, ok := Hash(base)
	return ok && strings.HasPrefix(hex.EncodeToString(sum), h)
}

// Pattern is a regular expression (the same syntax in Go and JavaScript)
// of the build's module names: mcp-<hash>.wasm, and the names bundlers
// give it when they append a hash of their own (mcp-<hash>-B3x9.wasm).
// The content is fixed either way.
var Pattern = `^mcp-` + hexRE + `(?:[-.][A-Za-z0-9_-]+)?\.wasm$`

// ManifestSuffix follows a hashed name to name its manifest.
const ManifestSuffix = ".sha256"

// ManifestName is the manifest of the hashed file base.
func ManifestName(base string) string { return base + ManifestSuffix }

// MaxManifest caps the bytes of a manifest a reader takes.
const MaxManifest = 4 << 10

// Manifest is a manifest's text: one "<hex SHA-256>  <name>" line per entry,
// in the given order, as sha256sum writes (sha256sum -c checks it).
func Manifest(names []string, sums [][]byte) []byte {
	var b bytes.Buffer
	for i, n := range names {
		b.WriteString(hex.EncodeToString(sums[i]) + "  " + n + "\n")
	}
	return b.Bytes()
}

// ParseManifest reads a manifest into name → hex SHA-256, skipping lines
// that are not of that form; a text over [MaxManifest] yields nothing.
func ParseManifest(b []byte) map[string]string {
	out := map[string]string{}
	if len(b) > MaxManifest {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 2*sha256.Size || strings.Trim(sum, "0123456789abcdef") != "" || name == "" {
			continue
		}
		out[name] = sum
	}
	return out
}

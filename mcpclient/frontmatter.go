package mcpclient

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// parseFrontmatter reads the YAML frontmatter of a SKILL.md (between the
// opening "---" line and the next) into JSON values. It reads the YAML a
// skill's frontmatter is written in, the Agent Skills format's text
// fields and string maps and what authors commonly add: block mappings
// and sequences, plain, quoted and block scalars, flow sequences and
// comments. Anything else (anchors, tags, flow mappings with content,
// complex keys) is an error, so a skill whose frontmatter this cannot
// read is not loaded rather than compared wrongly; a full YAML library
// would add more than half a megabyte to the module for this one check.
func parseFrontmatter(data []byte) (map[string]any, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil, fmt.Errorf("it does not begin with YAML frontmatter")
	}
	var lines []string
	closed := false
	for _, l := range strings.Split(rest, "\n") {
		if strings.TrimRight(l, " \t") == "---" {
			closed = true
			break
		}
		lines = append(lines, l)
	}
	if !closed {
		return nil, fmt.Errorf("its frontmatter does not end")
	}
	for _, l := range lines {
		if strings.Contains(l, "\t") {
			// YAML forbids tabs in indentation and reads them
			// elsewhere by rules refused rather than guessed.
			return nil, fmt.Errorf("its frontmatter has tabs, which this client does not read")
		}
		if !utf8.ValidString(l) || strings.IndexFunc(l, func(r rune) bool { return r != '\t' && (unicode.IsControl(r) || r == '\ufeff') }) >= 0 {
			return nil, fmt.Errorf("its frontmatter has characters YAML does not allow")
		}
	}
	p := &yamlLines{lines: lines}
	p.skipBlank()
	if p.done() {
		return nil, fmt.Errorf("its frontmatter is empty")
	}
	v, err := p.block(0, 0)
	if err != nil {
		return nil, err
	}
	p.skipBlank()
	if !p.done() {
		return nil, p.unread()
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("its frontmatter is not a YAML mapping")
	}
	return m, nil
}

// yamlLines is a reader of YAML block structure, a line at a time.
type yamlLines struct {
	lines []string
	i     int
}

func (p *yamlLines) done() bool { return p.i >= len(p.lines) }

func (p *yamlLines) unread() error {
	return fmt.Errorf("its frontmatter has YAML this client does not read (line %d)", p.i+2)
}

// content is line l without a comment, trailing space or the indent.
func content(l string) (indent int, s string) {
	indent = len(l) - len(strings.TrimLeft(l, " "))
	return indent, strings.TrimRight(stripComment(l[indent:]), " \t")
}

// stripComment cuts a " #" comment that is not inside quotes.
func stripComment(s string) string {
	if strings.HasPrefix(s, "#") {
		return ""
	}
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
		case c == '"' || c == '\'':
			if i == 0 || s[i-1] == ' ' || s[i-1] == '[' || s[i-1] == ',' || s[i-1] == ':' {
				quote = c
			}
		case c == '#' && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

// commented reports whether line l ends in a comment.
func commented(l string) bool {
	_, s := content(l)
	return strings.TrimRight(strings.TrimLeft(l, " "), " \t") != s
}

func (p *yamlLines) skipBlank() {
	for !p.done() {
		if _, s := content(p.lines[p.i]); s != "" {
			return
		}
		p.i++
	}
}

// block reads the mapping or sequence whose lines are indented exactly
// indent (at least min), from the current line.
func (p *yamlLines) block(indent, depth int) (any, error) {
	if depth > 32 {
		return nil, fmt.Errorf("its frontmatter nests too deep")
	}
	p.skipBlank()
	if p.done() {
		return nil, nil
	}
	if strings.Contains(p.lines[p.i], "\t") && strings.HasPrefix(strings.TrimLeft(p.lines[p.i], " "), "\t") {
		return nil, p.unread()
	}
	in, s := content(p.lines[p.i])
	if in != indent {
		return nil, p.unread()
	}
	if s == "-" || strings.HasPrefix(s, "- ") {
		return p.sequence(indent, depth)
	}
	return p.mapping(indent, depth)
}

var plainKey = lazyRegexp(`^[^\s:#&*!|>'"%@` + "`" + `{}\[\],?-][^:#]*?$|^-[^\s:#][^:#]*?$`)

func (p *yamlLines) mapping(indent, depth int) (any, error) {
	m := map[string]any{}
	for {
		p.skipBlank()
		if p.done() {
			return m, nil
		}
		in, s := content(p.lines[p.i])
		if in < indent {
			return m, nil
		}
		if in > indent {
			return nil, p.unread()
		}
		key, val, err := splitKey(s)
		if err != nil {
			return nil, p.unread()
		}
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("its frontmatter has the key %q twice", key)
		}
		p.i++
		v, err := p.value(val, indent, depth, false)
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
}

// splitKey splits "key: value" (the key plain or quoted).
func splitKey(s string) (key, val string, err error) {
	if s == "" {
		return "", "", fmt.Errorf("no key")
	}
	if s[0] == '"' || s[0] == '\'' {
		end := closingQuote(s)
		if end < 0 || end >= 1024 || end+1 >= len(s) || s[end+1] != ':' {
			return "", "", fmt.Errorf("bad key")
		}
		k, err := quoted(s[:end+1])
		if err != nil {
			return "", "", err
		}
		rest := s[end+2:]
		if rest != "" && rest[0] != ' ' {
			return "", "", fmt.Errorf("bad key")
		}
		return k.(string), strings.TrimSpace(rest), nil
	}
	i := strings.Index(s, ": ")
	if i < 0 {
		if !strings.HasSuffix(s, ":") {
			return "", "", fmt.Errorf("no key")
		}
		i = len(s) - 1
	}
	key = strings.TrimRight(s[:i], " \t")
	if len(key) > 1024 || !plainKey().MatchString(key) {
		// YAML allows an implicit key of at most 1024 characters.
		return "", "", fmt.Errorf("bad key")
	}
	return key, strings.TrimSpace(s[i+1:]), nil
}

// value reads what follows "key:" or "- " on a line (val) and any lines
// that continue it, for an entry at indent.
// A mapping's value may be a sequence at the mapping's own indent; a
// sequence item's (item) may not.
func (p *yamlLines) value(val string, indent, depth int, item bool) (any, error) {
	switch {
	case val == "":
		return p.nested(indent, depth, item)
	case val[0] == '|' || val[0] == '>':
		return p.blockScalar(val, indent)
	case val[0] == '[':
		return p.flowSequence(val)
	case val[0] == '"' || val[0] == '\'':
		v, err := p.multiQuoted(val, indent)
		if err != nil {
			return nil, err
		}
		return v, nil
	case strings.ContainsAny(val[:1], "&*!{}%@`,]?") || val == "-" || strings.HasPrefix(val, "- ") || val == ":" || strings.HasPrefix(val, ": "):
		return nil, p.unread()
	}
	return p.plain(val, indent)
}

// nested reads the block under an entry whose line ends at its key or
// dash: more-indented lines, or a sequence at a mapping's own indent;
// else the value is null.
func (p *yamlLines) nested(indent, depth int, item bool) (any, error) {
	p.skipBlank()
	if p.done() {
		return nil, nil
	}
	in, s := content(p.lines[p.i])
	if in > indent || (!item && in == indent && (s == "-" || strings.HasPrefix(s, "- "))) {
		return p.block(in, depth+1)
	}
	return nil, nil
}

// plain reads a plain scalar (val), perhaps continued on more-indented
// lines; what this reader is unsure of is refused (unread).
func (p *yamlLines) plain(val string, indent int) (any, error) {
	parts := []string{val}
	for !p.done() {
		in, s := content(p.lines[p.i])
		if s == "" || in <= indent {
			break
		}
		if commented(p.lines[p.i-1]) {
			// A comment ends a plain scalar: no line may continue it.
			return nil, p.unread()
		}
		parts = append(parts, s)
		p.i++
	}
	for _, part := range parts {
		if strings.Contains(part, ": ") || strings.HasSuffix(part, ":") || strings.Contains(part, " #") {
			return nil, p.unread()
		}
	}
	if len(parts) > 1 {
		return strings.Join(parts, " "), nil
	}
	if unsureScalar(val) {
		return nil, p.unread()
	}
	return plainScalar(val), nil
}

func (p *yamlLines) sequence(indent, depth int) (any, error) {
	l := []any{}
	for {
		p.skipBlank()
		if p.done() {
			return l, nil
		}
		in, s := content(p.lines[p.i])
		if in < indent {
			return l, nil
		}
		if in > indent || !(s == "-" || strings.HasPrefix(s, "- ")) {
			return nil, p.unread()
		}
		after := strings.TrimPrefix(s, "-")
		item := strings.TrimSpace(after)
		if _, _, err := splitKey(item); err == nil && item != "" && item[0] != '"' && item[0] != '\'' && item[0] != '[' {
			// "- key: value": a mapping whose lines sit where its first
			// key does, past the dash.
			col := indent + 1 + len(after) - len(strings.TrimLeft(after, " "))
			p.lines[p.i] = strings.Repeat(" ", col) + item
			v, err := p.block(col, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
			continue
		}
		p.i++
		v, err := p.value(item, indent, depth, true)
		if err != nil {
			return nil, err
		}
		l = append(l, v)
	}
}

// blockScalar reads a literal (|) or folded (>) scalar's lines.
func (p *yamlLines) blockScalar(head string, indent int) (any, error) {
	folded := head[0] == '>'
	chomp := head[1:]
	if chomp != "" && chomp != "-" && chomp != "+" {
		return nil, p.unread()
	}
	var raw []string
	bodyIndent := -1
	for !p.done() {
		l := p.lines[p.i]
		if l == "" {
			raw = append(raw, "")
			p.i++
			continue
		}
		if strings.TrimSpace(l) == "" {
			// Spaces alone on a line: whether they are text depends on
			// the indentation, which is refused rather than guessed.
			return nil, p.unread()
		}
		in := len(l) - len(strings.TrimLeft(l, " "))
		if in <= indent {
			break
		}
		if bodyIndent < 0 {
			bodyIndent = in
		}
		if in < bodyIndent {
			return nil, p.unread()
		}
		raw = append(raw, l[bodyIndent:])
		p.i++
	}
	// Trailing blank lines belong to the chomping, not the text.
	trail := 0
	for len(raw) > 0 && raw[len(raw)-1] == "" {
		raw = raw[:len(raw)-1]
		trail++
	}
	if len(raw) == 0 {
		if chomp == "+" {
			return strings.Repeat("\n", trail), nil
		}
		return "", nil
	}
	lead := 0
	for raw[lead] == "" {
		lead++
	}
	s := strings.Repeat("\n", lead)
	if folded {
		s += fold(raw[lead:])
	} else {
		s += strings.Join(raw[lead:], "\n")
	}
	switch chomp {
	case "-":
	case "+":
		s += "\n" + strings.Repeat("\n", trail)
	default:
		s += "\n"
	}
	return s, nil
}

// fold joins a folded scalar's lines: two lines of text join with a
// space, each blank line between lines is a newline, and lines indented
// more than the first keep their line breaks.
func fold(raw []string) string {
	var b strings.Builder
	b.WriteString(raw[0])
	last := raw[0] // the last line that is not blank
	blanks := 0
	for _, l := range raw[1:] {
		if l == "" {
			blanks++
			continue
		}
		switch {
		case blanks > 0 && !strings.HasPrefix(l, " ") && !strings.HasPrefix(last, " "):
			b.WriteString(strings.Repeat("\n", blanks))
		case blanks > 0:
			b.WriteString(strings.Repeat("\n", blanks+1))
		case strings.HasPrefix(l, " ") || strings.HasPrefix(last, " "):
			b.WriteByte('\n')
		default:
			b.WriteByte(' ')
		}
		b.WriteString(l)
		last, blanks = l, 0
	}
	return b.String()
}

// multiQuoted reads a quoted scalar that may go on over more lines.
func (p *yamlLines) multiQuoted(val string, indent int) (any, error) {
	s := val
	for closingQuote(s) < 0 {
		if p.done() {
			return nil, p.unread()
		}
		in, next := content(p.lines[p.i])
		if next == "" || in <= indent || strings.HasSuffix(s, "\\") {
			// Blank lines and escaped line breaks fold in ways
			// refused rather than guessed.
			return nil, p.unread()
		}
		s += " " + strings.TrimSpace(p.lines[p.i])
		p.i++
	}
	end := closingQuote(s)
	if strings.TrimSpace(stripComment(s[end+1:])) != "" {
		return nil, p.unread()
	}
	return quoted(s[:end+1])
}

// closingQuote is the index of the quote that ends the quoted scalar s
// begins with, or -1.
func closingQuote(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		case s[i] == q:
			return i
		}
	}
	return -1
}

// quoted decodes a whole quoted scalar.
func quoted(s string) (any, error) {
	if s[0] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), nil
	}
	var out string
	if err := json.Unmarshal([]byte(strings.ReplaceAll(s, `\/`, "/")), &out); err != nil {
		return nil, fmt.Errorf("its frontmatter has a double-quoted string this client does not read")
	}
	return out, nil
}

// flowSequence reads "[a, b, 'c']" on one line.
func (p *yamlLines) flowSequence(val string) (any, error) {
	if !strings.HasSuffix(val, "]") {
		return nil, p.unread()
	}
	inner := strings.TrimSpace(val[1 : len(val)-1])
	l := []any{}
	for inner != "" {
		var item string
		if inner[0] == '"' || inner[0] == '\'' {
			end := closingQuote(inner)
			if end < 0 {
				return nil, p.unread()
			}
			v, err := quoted(inner[:end+1])
			if err != nil {
				return nil, err
			}
			l = append(l, v)
			inner = strings.TrimSpace(inner[end+1:])
		} else {
			i := strings.IndexByte(inner, ',')
			if i < 0 {
				i = len(inner)
			}
			item = strings.TrimSpace(inner[:i])
			if item == "" || strings.ContainsAny(item, "[]{}&*!#|>%@`?:-") || unsureScalar(item) {
				return nil, p.unread()
			}
			l = append(l, plainScalar(item))
			inner = inner[i:]
		}
		if inner == "" {
			break
		}
		if inner[0] != ',' {
			return nil, p.unread()
		}
		inner = strings.TrimSpace(inner[1:])
	}
	return l, nil
}

var (
	yamlInt   = lazyRegexp(`^[-+]?[0-9]+$`)
	yamlFloat = lazyRegexp(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
)

// unsureScalar reports a plain scalar whose type YAML libraries resolve
// differently (octal and hex forms, digits with underscores, a leading
// zero), and infinities and not-a-number: refused rather than guessed.
func unsureScalar(s string) bool {
	t := strings.TrimLeft(s, "-+")
	if len(t) > 1 && t[0] == '0' && strings.ContainsAny(t[1:2], "0123456789xXoObB_") {
		return true
	}
	if strings.EqualFold(t, ".nan") || strings.EqualFold(t, ".inf") {
		// Not a number JSON can carry: no entry's frontmatter can match.
		return true
	}
	return len(t) > 0 && t[0] >= '0' && t[0] <= '9' && strings.Contains(t, "_")
}

// plainScalar resolves a plain scalar as YAML 1.2's core schema does.
func plainScalar(s string) any {
	switch s {
	case "~", "null", "Null", "NULL":
		return nil
	case "true", "True", "TRUE":
		return true
	case "false", "False", "FALSE":
		return false
	}
	if yamlInt().MatchString(s) {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	}
	if yamlFloat().MatchString(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return s
}

package permissions

import (
	"fmt"
	"net/url"
	"strings"
)

// hostPattern is a fetch specifier: the host of the URL fetched.
// "example.com" is that host; "*.example.com" any host below it, at any
// depth (not example.com itself). Claude Code's "domain:example.com" is
// read as "example.com". The port is not part of it.
type hostPattern struct {
	host string // lower case, without "*."
	sub  bool   // "*.": the hosts below host
}

// parseHost compiles a fetch specifier.
func parseHost(spec string) (*hostPattern, error) {
	s := strings.ToLower(strings.TrimSpace(spec))
	s = strings.TrimPrefix(s, "domain:")
	if strings.Contains(s, "/") || strings.Contains(s, ":") && !strings.HasPrefix(s, "[") {
		return nil, fmt.Errorf("a fetch rule names a host, such as fetch(example.com) or fetch(*.example.com), not a URL or a port")
	}
	p := &hostPattern{}
	if rest, ok := strings.CutPrefix(s, "*."); ok {
		p.sub, s = true, rest
	}
	s = strings.TrimSuffix(s, ".")
	if s == "" || strings.ContainsAny(s, "* \t") {
		return nil, fmt.Errorf("the host pattern %q: write a host (example.com), or *. and a host for the hosts below it (*.example.com)", spec)
	}
	p.host = s
	return p, nil
}

// match reports whether host (as URLHost gives it) is the pattern's.
func (p *hostPattern) match(host string) bool {
	if p.sub {
		return strings.HasSuffix(host, "."+p.host)
	}
	return host == p.host
}

// URLHost is the host of the URL a fetch call names, as the rules match
// it: lower case, without the port or a final dot, an IPv6 address in
// brackets; "" when the URL has none or does not parse.
func URLHost(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return h
}

// Package provider talks to the model providers over HTTP: Anthropic's
// Messages API, OpenAI's Chat Completions API (and any server compatible
// with it), and echo, an offline provider for demos and tests.
//
// The wire formats themselves live in serializers; this package adds the
// HTTP policy: URLs, headers, keys, retries with backoff, timeouts and
// cancellation. API keys never appear in logs or errors.
package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/panto-dev/panto/serializers"
)

// Provider sends one request and returns the complete reply. With
// req.Stream set, fn receives the reply's pieces as they arrive. A reply is
// only returned whole: an error, a cut stream or a cancelled ctx returns an
// error and no reply, so nothing half-received is ever recorded.
type Provider interface {
	Name() string
	Send(ctx context.Context, req serializers.Request, fn serializers.DeltaFunc) (serializers.Reply, error)
}

// Names of the built-in providers.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
	Echo      = "echo"
)

// Default API roots.
const (
	DefaultAnthropicURL = "https://api.anthropic.com"
	DefaultOpenAIURL    = "https://api.openai.com/v1"
)

// Config configures a provider.
type Config struct {
	// Name is anthropic, openai or echo.
	Name string
	// BaseURL is the API root: Anthropic's without /v1 (requests go to
	// {base}/v1/messages), OpenAI's with it (requests go to
	// {base}/chat/completions), as the official SDKs do. Empty means the
	// provider's public API.
	BaseURL string
	// APIKey authenticates; required for anthropic, and for openai unless
	// BaseURL is a local server (LocalURL), which needs none.
	APIKey string
	// AnthropicVersion is the anthropic-version header; empty means
	// 2023-06-01.
	AnthropicVersion string
	// PromptCacheKey says whether an OpenAI request that asks for
	// caching sends its key as prompt_cache_key; nil means only to
	// OpenAI's own API (OpenAIKeysCache), since a compatible server may
	// reject a field it does not know.
	PromptCacheKey *bool
	// Retries is how many times a failed request is retried (connection
	// errors, 408, 409, 429, 5xx).
	Retries int
	// Timeout bounds one whole request, reply included; 0 means none.
	Timeout time.Duration
	// Client is the HTTP client; nil means a new one that follows a
	// redirect only to the same scheme, host and port (sameOrigin).
	Client *http.Client
	// Logger receives a line per retry; nil means none.
	Logger hclog.Logger
	// MaxReply bounds the bytes read of one reply; 0 means MaxReplyBytes.
	MaxReply int64
	// Sleep waits between retries; nil means a timer that honours ctx.
	// Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// ErrNoAPIKey is returned when a provider that needs a key has none. Set
// the provider's environment variable (ANTHROPIC_API_KEY, OPENAI_API_KEY).
var ErrNoAPIKey = errors.New("no API key")

// New returns the provider cfg names.
func New(cfg Config) (Provider, error) {
	if cfg.Client == nil {
		cfg.Client = &http.Client{CheckRedirect: sameOrigin}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	switch cfg.Name {
	case Anthropic:
		if cfg.APIKey == "" {
			return nil, fmt.Errorf("provider anthropic: %w: set ANTHROPIC_API_KEY", ErrNoAPIKey)
		}
		if cfg.BaseURL == "" {
			cfg.BaseURL = DefaultAnthropicURL
		}
		return &anthropicProvider{http: newHTTP(cfg)}, nil
	case OpenAI:
		if cfg.BaseURL == "" {
			cfg.BaseURL = DefaultOpenAIURL
		}
		if cfg.APIKey == "" && !LocalURL(cfg.BaseURL) {
			// Without a key a remote server can only refuse (or, on a
			// network without DNS, never answer): say so now.
			return nil, fmt.Errorf("provider openai: %w: set OPENAI_API_KEY (only a local server, such as http://localhost:11434/v1, needs none)", ErrNoAPIKey)
		}
		return &openaiProvider{http: newHTTP(cfg)}, nil
	case Echo:
		return echoProvider{}, nil
	}
	return nil, fmt.Errorf("unknown provider %q: want anthropic, openai or echo", cfg.Name)
}

// OpenAIKeysCache reports whether the server at baseURL (an OpenAI
// base URL, empty for OpenAI's) takes prompt_cache_key by default: only
// OpenAI's own API, at api.openai.com. Compatible servers gain nothing
// from it that panto knows of (they cache by prefix or not at all), and
// the strict ones answer 400 to a field they do not know.
func OpenAIKeysCache(baseURL string) bool {
	if baseURL == "" {
		return true
	}
	u, err := url.Parse(baseURL)
	return err == nil && u.Scheme == "https" && strings.EqualFold(u.Hostname(), "api.openai.com")
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// LocalURL reports whether rawURL names a server on this machine or the
// local network, which may need no API key: a loopback, private, link-local
// or carrier-grade NAT (Tailscale's 100.64.0.0/10) address, localhost, a
// one-label host name ("ollama", as a container network names it), or a
// name under .localhost, .local, .internal, .lan or .home.arpa. Nothing is
// resolved: the name decides.
func LocalURL(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() ||
			cgnat.Contains(ip)
	}
	if host == "" {
		return false
	}
	if !strings.Contains(host, ".") {
		return true
	}
	for _, suffix := range []string{".localhost", ".local", ".internal", ".lan", ".home.arpa"} {
		if strings.HasSuffix(host, suffix) {
			return true
		}
	}
	return false
}

// cgnat is the shared address space of RFC 6598, where Tailscale puts its
// machines.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// joinURL appends path to base without doubling the slash.
func joinURL(base, path string) string {
	return strings.TrimRight(base, "/") + path
}

package app

import (
	"github.com/panto-dev/panto/cmd/panto/internal/config"
	"github.com/panto-dev/panto/cmd/panto/internal/layers"
	"github.com/panto-dev/panto/cmd/panto/internal/prices"
	"github.com/panto-dev/panto/host"
)

// Prices is what models cost: the built-in table under config's
// [prices]. Every front end prices tokens by it (through the host's
// Usage events, or Sum for a session's log).
func (a *App) Prices() prices.Table { return pricesOf(a.cfg) }

func pricesOf(cfg config.Config) prices.Table {
	over := make(map[string]prices.Price, len(cfg.Prices))
	for m, p := range cfg.Prices {
		over[m] = prices.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
	}
	return prices.New(over)
}

// costFunc is the host's price of a request, from t.
func costFunc(t prices.Table) host.CostFunc {
	return func(provider, model string, u host.Usage) (float64, bool) {
		return t.Cost(model, prices.Reported(provider, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens))
	}
}

// LoadPrices is Prices for a subcommand that loads no App (panto session
// list): the built-in table under the config's [prices]. When the config
// cannot be loaded it returns the built-in table and the error.
func LoadPrices(env Env, d layers.Dirs) (prices.Table, error) {
	cfg, err := loadConfig(env, d)
	if err != nil {
		return prices.Table{}, err
	}
	return pricesOf(cfg), nil
}

package app

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/panto-dev/panto/host/extension"
)

// WebExtension is the file name of the first-party web extension
// (extensions/web): panto hands it [web.search], which turns its search
// tool on.
const WebExtension = "web"

// webConfig is what the web extension reads in Init (extensions/web).
type webConfig struct {
	Search *webSearch `json:"search,omitempty"`
}

type webSearch struct {
	Endpoint string `json:"endpoint"`
	API      string `json:"api,omitempty"`
	Key      string `json:"key,omitempty"`
}

// withWeb hands [web.search] to the web extension, when both are there.
// A key_env that names an unset variable leaves search off, with a
// notice. The extension watches nothing, so, like mcp, it is no
// safeguard unless config's [extensions.web] says so: when it cannot
// start, the other tools still run.
func (a *App) withWeb(specs []extension.Spec) ([]extension.Spec, error) {
	ws := a.cfg.WebSearch
	for i := range specs {
		if filepath.Base(specs[i].Path) != WebExtension {
			continue
		}
		specs[i].Required = a.cfg.Required[WebExtension]
		if ws == nil {
			continue
		}
		key := ws.Key
		if ws.KeyEnv != "" {
			key = a.env.Getenv(ws.KeyEnv)
			if key == "" {
				a.env.notify(fmt.Sprintf("web.search.key_env names %s, which is not set (%s); the search tool is left out", ws.KeyEnv, ws.Source))
				continue
			}
		}
		data, err := json.Marshal(webConfig{Search: &webSearch{Endpoint: ws.Endpoint, API: ws.API, Key: key}})
		if err != nil {
			return nil, fmt.Errorf("hand [web.search] to the web extension: %w", err)
		}
		specs[i].Config = data
	}
	return specs, nil
}

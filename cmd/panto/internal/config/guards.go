package config

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
)

// GuardKeys are the settings that decide where the user's data goes and
// what guards them: where the API key is sent, who gets it, which
// extensions are off or not safeguards, who answers a confirm. A project
// never sets them (project.go); in the user's own files they can still be
// changed by anything that writes the user's files — the model's tools
// among them, until an OS sandbox keeps those out — so panto remembers
// them from run to run and says when they changed (cmd/panto).
var GuardKeys = []string{"provider", "base_url", "extension_api_keys", "disabled_extensions", "confirm_default", "extensions.NAME.required",
	"permissions.mode", "sandbox.mode", "sandbox.network", "sandbox.writable_roots", "sandbox.required", "sandbox.unix_sockets"}

// Guards are, by config file, the GuardKeys it sets and their values as
// TOML writes them ("extensions.guard.required" for a table's).
type Guards map[string]map[string]string

// guards returns the GuardKeys f sets.
func (f file) guards() map[string]string {
	out := map[string]string{}
	v := reflect.ValueOf(f)
	for i := range v.NumField() {
		key := v.Type().Field(i).Tag.Get("toml")
		if v.Field(i).IsNil() || !slices.Contains(GuardKeys, key) {
			continue
		}
		out[key] = tomlValue(v.Field(i))
	}
	for _, name := range slices.Sorted(maps.Keys(f.Extensions)) {
		if r := f.Extensions[name].Required; r != nil {
			out["extensions."+name+".required"] = strconv.FormatBool(*r)
		}
	}
	f.guardPermissions(out)
	return out
}

// GuardChange is one guarding setting whose value changed in a file.
type GuardChange struct {
	Path, Key string
	// Was and Now are the values, "" when the file did not set it.
	Was, Now string
}

// Changed returns what changed from prev, what an earlier run saw, to g,
// by file and key in order. A file prev does not know is new: nothing of
// it is a change.
func (g Guards) Changed(prev Guards) []GuardChange {
	var out []GuardChange
	for _, path := range slices.Sorted(maps.Keys(g)) {
		was, known := prev[path]
		if !known {
			continue
		}
		now := g[path]
		keys := slices.Sorted(maps.Keys(now))
		for k := range was {
			if _, ok := now[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			if was[k] != now[k] {
				out = append(out, GuardChange{Path: path, Key: k, Was: was[k], Now: now[k]})
			}
		}
	}
	return out
}

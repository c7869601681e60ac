package protocol

import (
	"encoding/json"
	"fmt"
	"net"

	"github.com/hashicorp/go-plugin"
)

// Reattach is go-plugin's reattach config as JSON, the shape of the
// PANTO_REATTACH_EXTENSIONS variable (Terraform's TF_REATTACH_PROVIDERS
// has the same): an extension run by hand under a debugger prints it, and
// panto, given it, connects instead of starting the extension.
type Reattach struct {
	Protocol        string `json:"Protocol"`
	ProtocolVersion int    `json:"ProtocolVersion"`
	Pid             int    `json:"Pid"`
	Test            bool   `json:"Test"`
	Addr            struct {
		Network string `json:"Network"`
		String  string `json:"String"`
	} `json:"Addr"`
}

// ReattachEnv is the variable that makes panto attach to extensions
// already running under a debugger.
const ReattachEnv = "PANTO_REATTACH_EXTENSIONS"

// EncodeReattach is the PANTO_REATTACH_EXTENSIONS value for extension
// name served at rc.
func EncodeReattach(name string, rc *plugin.ReattachConfig) (string, error) {
	var r Reattach
	r.Protocol, r.ProtocolVersion, r.Pid, r.Test = string(rc.Protocol), rc.ProtocolVersion, rc.Pid, rc.Test
	r.Addr.Network, r.Addr.String = rc.Addr.Network(), rc.Addr.String()
	data, err := json.Marshal(map[string]Reattach{name: r})
	return string(data), err
}

// DecodeReattach reads a PANTO_REATTACH_EXTENSIONS value: extension name
// to its reattach config.
func DecodeReattach(s string) (map[string]*plugin.ReattachConfig, error) {
	var m map[string]Reattach
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("not a JSON object of reattach configs: %w", err)
	}
	out := make(map[string]*plugin.ReattachConfig, len(m))
	for name, r := range m {
		var addr net.Addr
		switch r.Addr.Network {
		case "unix":
			addr = &net.UnixAddr{Name: r.Addr.String, Net: "unix"}
		case "tcp":
			a, err := net.ResolveTCPAddr("tcp", r.Addr.String)
			if err != nil {
				return nil, fmt.Errorf("extension %s: address %q: %w", name, r.Addr.String, err)
			}
			addr = a
		default:
			return nil, fmt.Errorf("extension %s: unknown network %q (want unix or tcp)", name, r.Addr.Network)
		}
		if r.Protocol != string(plugin.ProtocolGRPC) {
			return nil, fmt.Errorf("extension %s: protocol %q (want grpc)", name, r.Protocol)
		}
		out[name] = &plugin.ReattachConfig{Protocol: plugin.ProtocolGRPC, ProtocolVersion: r.ProtocolVersion, Pid: r.Pid, Test: r.Test, Addr: addr}
	}
	return out, nil
}

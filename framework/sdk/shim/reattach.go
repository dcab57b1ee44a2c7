package shim

import (
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/hashicorp/go-plugin"

	"github.com/tickemu/tickemu/framework/sdk"
)

// ReattachEnv is the environment variable through which a host finds
// plugins that run on their own (started with --debug, typically under a
// debugger): its value is a Reattach set in JSON, the line such a plugin
// prints. It plays the part of Terraform's TF_REATTACH_PROVIDERS.
const ReattachEnv = "TICKEMU_REATTACH_PLUGINS"

// Reattach maps "KIND/NAME" to where that plugin serves.
type Reattach map[string]ReattachAddr

// ReattachAddr is go-plugin's ReattachConfig in a form JSON can carry
// (net.Addr is an interface).
type ReattachAddr struct {
	Protocol        string `json:"protocol"`
	ProtocolVersion int    `json:"protocol_version"`
	Pid             int    `json:"pid"`
	Network         string `json:"network"`
	Address         string `json:"address"`
}

// NewReattach describes the plugins of factories served at rc.
func NewReattach(rc *plugin.ReattachConfig, factories []sdk.Factory) Reattach {
	r := Reattach{}
	a := ReattachAddr{Protocol: string(rc.Protocol), ProtocolVersion: rc.ProtocolVersion, Pid: rc.Pid,
		Network: rc.Addr.Network(), Address: rc.Addr.String()}
	for _, f := range factories {
		r[string(f.Kind)+"/"+f.Name] = a
	}
	return r
}

// ParseReattach parses the value of ReattachEnv (or --plugin-reattach).
func ParseReattach(s string) (Reattach, error) {
	var r Reattach
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return nil, fmt.Errorf("reattach value: want the JSON line a plugin started with --debug prints: %w", err)
	}
	for k, a := range r {
		kind, name, ok := strings.Cut(k, "/")
		if !ok || kind == "" || name == "" {
			return nil, fmt.Errorf("reattach value: key %q: want KIND/NAME", k)
		}
		if a.Network == "" || a.Address == "" {
			return nil, fmt.Errorf("reattach value: %s: no network address", k)
		}
		if a.Protocol != "" && a.Protocol != string(plugin.ProtocolGRPC) {
			return nil, fmt.Errorf("reattach value: %s: protocol %q, tickemu speaks grpc", k, a.Protocol)
		}
	}
	return r, nil
}

// Keys returns the KIND/NAME keys, sorted.
func (r Reattach) Keys() []string {
	out := make([]string, 0, len(r))
	for k := range r {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Config returns go-plugin's ReattachConfig for a. Test is set: the host
// neither kills the plugin nor waits for it, it ends on its own (^C).
func (a ReattachAddr) Config() (*plugin.ReattachConfig, error) {
	var addr net.Addr
	var err error
	switch a.Network {
	case "unix", "unixgram", "unixpacket":
		addr, err = net.ResolveUnixAddr(a.Network, a.Address)
	case "tcp", "tcp4", "tcp6":
		addr, err = net.ResolveTCPAddr(a.Network, a.Address)
	default:
		err = fmt.Errorf("network %q: want unix or tcp", a.Network)
	}
	if err != nil {
		return nil, err
	}
	return &plugin.ReattachConfig{Protocol: plugin.ProtocolGRPC, ProtocolVersion: a.ProtocolVersion,
		Addr: addr, Pid: a.Pid, Test: true}, nil
}

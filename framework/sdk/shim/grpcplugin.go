package shim

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"github.com/tickemu/tickemu/framework/sdk"
)

// Handshake is the go-plugin handshake between tickemu and its plugin
// processes. The cookie only stops a plugin binary run by hand from waiting
// for a host forever (go-plugin prints a hint and exits); it is not security.
// The application protocol version is negotiated through VersionedPlugins
// (ServerPlugins, ClientPlugins) and is sdk.ProtocolVersion.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  sdk.ProtocolVersion,
	MagicCookieKey:   "TICKEMU_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "7f3c1d0b-tickemu-timekeeping-plugin",
}

// CatalogName is the go-plugin plugin name under which a plugin process
// serves its catalog; each kind is served under its sdk.Kind.
const CatalogName = "catalog"

// MaxMessageSize is the largest gRPC message a plugin server accepts or
// sends. go-plugin's default server keeps gRPC's 4 MiB receive limit; a
// clear "message larger than max" error is better than a silent OOM, so the
// limit is raised as terraform-plugin-go does (tf6server grpcMaxMessageSize).
// Hot-path messages are a few hundred bytes.
const MaxMessageSize = 256 << 20

// NewGRPCServer is the ServeConfig.GRPCServer of plugin processes.
func NewGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts, grpc.MaxRecvMsgSize(MaxMessageSize), grpc.MaxSendMsgSize(MaxMessageSize))
	return grpc.NewServer(opts...)
}

// ServerPlugins returns the go-plugin plugin sets a plugin process serves for
// factories: the catalog and each kind that has a factory. log is given to
// plugins that implement sdk.LoggerSetter.
func ServerPlugins(fs []sdk.Factory, log zerolog.Logger) (map[int]plugin.PluginSet, error) {
	if err := checkFactories(fs); err != nil {
		return nil, err
	}
	set := plugin.PluginSet{CatalogName: &catalogPlugin{factories: fs, log: log}}
	for _, f := range fs {
		if _, ok := set[string(f.Kind)]; !ok {
			set[string(f.Kind)] = &kindPlugin{kind: f.Kind, server: newRegistry(f.Kind, fs, log)}
		}
	}
	return map[int]plugin.PluginSet{sdk.ProtocolVersion: set}, nil
}

// ClientPlugins returns the go-plugin plugin sets a host dispenses from:
// CatalogName gives a *CatalogClient, each kind a *Conn.
func ClientPlugins() map[int]plugin.PluginSet {
	set := plugin.PluginSet{CatalogName: &catalogPlugin{}}
	for k := range kinds {
		set[string(k)] = &kindPlugin{kind: k}
	}
	return map[int]plugin.PluginSet{sdk.ProtocolVersion: set}
}

// kindPlugin is the go-plugin GRPCPlugin of one kind.
type kindPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	kind   sdk.Kind
	server *registry // nil on the host side
}

var _ plugin.GRPCPlugin = (*kindPlugin)(nil)

// GRPCServer implements plugin.GRPCPlugin.
func (p *kindPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	kinds[p.kind].register(s, p.server)
	return nil
}

// GRPCClient implements plugin.GRPCPlugin.
func (p *kindPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return &Conn{kind: p.kind, cc: cc}, nil
}

// Conn is what a host dispenses for a kind: a connection on which it opens
// sessions with that kind's plugins.
type Conn struct {
	kind sdk.Kind
	cc   grpc.ClientConnInterface
}

// Open opens a session with the plugin called name; see the package-level
// Open.
func (c *Conn) Open(name string, o Options) (sdk.Plugin, error) {
	return Open(c.cc, c.kind, name, o)
}

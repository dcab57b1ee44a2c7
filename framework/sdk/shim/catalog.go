package shim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/internal/fromproto"
	pb "github.com/tickemu/tickemu/framework/sdk/internal/pb/tickemu/plugin/v2"
)

// Description is what a plugin binary says about one of its plugins.
type Description struct {
	Info   sdk.Info
	Schema sdk.Schema
}

// catalogPlugin is the go-plugin GRPCPlugin of the catalog.
type catalogPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	factories []sdk.Factory // nil on the host side
	log       zerolog.Logger
}

var _ plugin.GRPCPlugin = (*catalogPlugin)(nil)

// GRPCServer implements plugin.GRPCPlugin.
func (p *catalogPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterCatalogServiceServer(s, &catalogServer{factories: p.factories, log: p.log})
	return nil
}

// GRPCClient implements plugin.GRPCPlugin.
func (p *catalogPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return &CatalogClient{c: pb.NewCatalogServiceClient(cc)}, nil
}

type catalogServer struct {
	pb.UnimplementedCatalogServiceServer
	factories []sdk.Factory
	log       zerolog.Logger
}

// Describe implements pb.CatalogServiceServer.
func (s *catalogServer) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return describe(s.factories, s.log)
}

// CatalogClient asks a plugin process what it serves.
type CatalogClient struct {
	c pb.CatalogServiceClient
}

// Describe lists the plugins the process serves, ordered by kind then name.
func (c *CatalogClient) Describe(timeout time.Duration) ([]Description, error) {
	if timeout == 0 {
		timeout = DefaultCallTimeout
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	resp, err := c.c.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		// The deadline travels to the server, which may report it first.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded {
			return nil, fmt.Errorf("%w: no answer to Describe within %v", sdk.ErrPluginTimeout, timeout)
		}
		return nil, err
	}
	out := make([]Description, len(resp.GetPlugins()))
	for i, d := range resp.GetPlugins() {
		out[i] = Description{Info: fromproto.Info(d.GetInfo()), Schema: fromproto.Schema(d.GetSchema())}
	}
	return out, nil
}

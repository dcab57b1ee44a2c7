//go:build !unix

package shim

import (
	"errors"
	"time"

	"google.golang.org/protobuf/proto"
)

// socketSupported: no Unix stream sockets here; sessions stay on gRPC.
const socketSupported = false

var errNoSocket = errors.New("shim: session sockets need a Unix platform")

type sockConn struct{}

func dialSocket(string) (*sockConn, error) { return nil, errNoSocket }
func (*sockConn) send(proto.Message) error { return errNoSocket }
func (*sockConn) recv(proto.Message) error { return errNoSocket }
func (*sockConn) shutdown()                {}
func (*sockConn) close()                   {}

type socketListener struct{}

func listenSocket() (*socketListener, string, error)            { return nil, "", errNoSocket }
func (*socketListener) accept(time.Duration) (*sockConn, error) { return nil, errNoSocket }

package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// DebugFlag, as the plugin binary's only argument, makes Serve serve on its
// own instead of waiting to be started by tickemu: the author starts the
// binary (under a debugger, say), and tickemu reattaches to it.
const DebugFlag = "--debug"

// debugRequested reports whether the binary was started as `BINARY --debug`.
func debugRequested(args []string) bool {
	return slices.Equal(args, []string{DebugFlag})
}

// serveDebug serves sets until SIGINT or SIGTERM, in go-plugin's test mode
// (the mode Terraform's provider debugging uses): no handshake cookie is
// needed, the plugin's stdout and stderr stay its own (its logs appear in
// the author's terminal), and the address is printed to out as the line
// to give tickemu:
//
//	TICKEMU_REATTACH_PLUGINS='{"clockevent/fixed":{...}}'
//
// Each tickemu run opens new sessions on the same process, so one debugging
// session serves as many runs as the author likes.
func serveDebug(fs []sdk.Factory, sets map[int]plugin.PluginSet, log zerolog.Logger, out io.Writer) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rc := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	cfg := config(sets, log)
	cfg.Test = &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: rc, CloseCh: closed}
	go plugin.Serve(cfg)
	select {
	case r := <-rc:
		line, err := json.Marshal(shim.NewReattach(r, fs))
		if err != nil {
			fmt.Fprintf(os.Stderr, "tickemu plugin: %v\n", err)
			os.Exit(1)
		}
		fmt.Fprintf(out, "# tickemu plugin serving in debug mode (pid %d); ^C to stop. For the runs to use it:\n", os.Getpid())
		fmt.Fprintf(out, "%s='%s'\n", shim.ReattachEnv, line)
		if f, ok := out.(*os.File); ok {
			_ = f.Sync()
		}
	case <-closed:
		fmt.Fprintln(os.Stderr, "tickemu plugin: debug server ended before it served")
		os.Exit(1)
	}
	<-closed
}

package pluginlog

import (
	"bytes"
	"errors"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/rs/zerolog"
)

func TestHCLog(t *testing.T) {
	tests := []struct {
		name string
		host zerolog.Level
		log  func(l hclog.Logger)
		want string
	}{
		{"error with fields", zerolog.InfoLevel,
			func(l hclog.Logger) {
				l.Error("plugin process exited", "path", "/p", "error", errors.New("signal: killed"))
			},
			`{"level":"error","path":"/p","error":"signal: killed","message":"plugin process exited"}` + "\n"},
		{"info demoted to debug", zerolog.InfoLevel,
			func(l hclog.Logger) { l.Info("starting plugin", "pid", 7) }, ""},
		{"info at a debug host", zerolog.DebugLevel,
			func(l hclog.Logger) { l.Info("starting plugin", "pid", 7) },
			`{"level":"debug","pid":7,"message":"starting plugin"}` + "\n"},
		{"named, with implied args, odd pair", zerolog.TraceLevel,
			func(l hclog.Logger) { l.Named("plugin").Named("stdio").With("id", 1).Trace("eof", "dangling") },
			`{"level":"trace","logger":"plugin.stdio","id":1,"EXTRA_VALUE_AT_END":"dangling","message":"eof"}` + "\n"},
		{"warn through a standard logger", zerolog.InfoLevel,
			func(l hclog.Logger) {
				l.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Warn}).Print("yamux: closing")
			},
			`{"level":"warn","message":"yamux: closing"}` + "\n"},
		{"off is silent", zerolog.TraceLevel,
			func(l hclog.Logger) { l.Log(hclog.Off, "nothing") }, ""},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		l := HCLog(zerolog.New(&b).Level(tt.host))
		tt.log(l)
		if got := b.String(); got != tt.want {
			t.Errorf("%s: logged %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestHCLogLevelOff: go-plugin parses plugin stderr itself unless the logger
// it is given reports Off; PluginOutput relies on that.
func TestHCLogLevelOff(t *testing.T) {
	l := HCLog(zerolog.New(&bytes.Buffer{}).Level(zerolog.TraceLevel))
	l.SetLevel(hclog.Trace)
	if got := l.Named("x").GetLevel(); got != hclog.Off {
		t.Errorf("GetLevel() = %v, want Off", got)
	}
	if !l.IsTrace() || !l.IsError() {
		t.Errorf("IsTrace(), IsError() = %v, %v at a trace logger, want true, true", l.IsTrace(), l.IsError())
	}
}

func TestNew(t *testing.T) {
	var b bytes.Buffer
	l := New(&b, "warn")
	l.Info().Msg("dropped")
	l.Error().Int("cpu", 3).Msg("kept")
	if got, want := b.String(), `{"level":"error","cpu":3,"message":"kept"}`+"\n"; got != want {
		t.Errorf("New(warn) logged %q, want %q", got, want)
	}
	b.Reset()
	l = New(&b, "bogus")
	l.Info().Msg("kept")
	if got, want := b.String(), `{"level":"info","message":"kept"}`+"\n"; got != want {
		t.Errorf("New(bogus) logged %q, want %q (info)", got, want)
	}
}

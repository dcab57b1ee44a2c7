package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/sdk/pluginlog"
)

// jsonKeys returns the keys of one JSON object, in order, repeats included.
func jsonKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %q", line)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
	}
	return keys
}

// TestHostRecordsNeverRepeatAKey: whatever go-plugin or a plugin process
// writes, each host JSON record has every key once, and the colliding value
// is kept under a prefixed key.
func TestHostRecordsNeverRepeatAKey(t *testing.T) {
	tests := []struct {
		name string
		log  func(host zerolog.Logger)
		want []string // keys of the record, in order
	}{
		{"go-plugin pair named like the host's plugin field", func(host zerolog.Logger) {
			pluginlog.HCLog(host.With().Str("plugin", "clockevent/fixed").Logger(), "plugin").
				Named("stdio").Debug("plugin process exited", "plugin", "bin/tickemu-plugin-fixed", "id", 42, "id", 43)
		}, []string{"level", "plugin", "logger", "hclog.plugin", "id", "hclog.id", "message"}},
		{"go-plugin pairs named like zerolog's own fields", func(host zerolog.Logger) {
			pluginlog.HCLog(host).With("message", "m", "level", "x").Error("boom", "time", "t")
		}, []string{"level", "hclog.message", "hclog.level", "hclog.time", "message"}},
		{"plugin line repeating keys and naming the host's", func(host zerolog.Logger) {
			out := NewPluginOutput(host, "clockevent/fixed", 0)
			out.SyncStdout().Write([]byte(`{"level":"warn","stream":"mine","cpu":1,"cpu":2,"plugin":"self","message":"m"}` + "\n"))
		}, []string{"level", "plugin", "stream", "plugin.stream", "cpu", "plugin.cpu", "message"}},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		tt.log(zerolog.New(&buf).Level(zerolog.DebugLevel))
		line := strings.TrimSpace(buf.String())
		got := jsonKeys(t, line)
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: keys %v, want %v\n%s", tt.name, got, tt.want, line)
		}
	}
}

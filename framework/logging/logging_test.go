package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestNew(t *testing.T) {
	tests := []struct {
		format, level string
		opts          []Option
		want          string // output of Info().Str("k","v").Msg("hello") and Debug().Msg("hidden")
	}{
		{"json", "", []Option{WithoutTimestamps()}, `{"level":"info","k":"v","message":"hello"}` + "\n"},
		{"auto", "info", []Option{WithoutTimestamps()}, `{"level":"info","k":"v","message":"hello"}` + "\n"}, // a buffer is not a terminal
		{"json", "debug", []Option{WithoutTimestamps()}, `{"level":"info","k":"v","message":"hello"}` + "\n" + `{"level":"debug","message":"hidden"}` + "\n"},
		{"json", "warn", []Option{WithoutTimestamps()}, ""},
		{"console", "info", []Option{WithoutTimestamps(), WithoutColor()}, "INF hello k=v\n"},
		{"console", "info", []Option{WithoutTimestamps()}, "INF hello k=v\n"}, // no colour off a terminal
	}
	for _, tt := range tests {
		var b bytes.Buffer
		l, err := New(&b, tt.format, tt.level, tt.opts...)
		if err != nil {
			t.Fatalf("New(%q, %q) = %v", tt.format, tt.level, err)
		}
		l.Info().Str("k", "v").Msg("hello")
		l.Debug().Msg("hidden")
		if got := b.String(); got != tt.want {
			t.Errorf("New(%q, %q) logged %q, want %q", tt.format, tt.level, got, tt.want)
		}
	}
}

func TestNewTimestamps(t *testing.T) {
	var b bytes.Buffer
	l, err := New(&b, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	l.Info().Msg("x")
	if !strings.Contains(b.String(), `"time":`) {
		t.Errorf("New(json) logged %q, want a time field", b.String())
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct{ format, level, want string }{
		{"xml", "info", `unknown log format "xml"`},
		{"json", "loud", `unknown log level "loud"`},
	}
	for _, tt := range tests {
		if _, err := New(&bytes.Buffer{}, tt.format, tt.level); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%q, %q) = %v, want an error containing %q", tt.format, tt.level, err, tt.want)
		}
	}
}

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in   string
		want zerolog.Level
		ok   bool
	}{
		{"", zerolog.InfoLevel, true},
		{"trace", zerolog.TraceLevel, true},
		{"debug", zerolog.DebugLevel, true},
		{"warn", zerolog.WarnLevel, true},
		{"error", zerolog.ErrorLevel, true},
		{"disabled", zerolog.Disabled, true},
		{"verbose", zerolog.NoLevel, false},
	}
	for _, tt := range tests {
		got, err := ParseLevel(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseLevel(%q) = %v, %v, want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestAttackLogEscapes (issue 31): a plugin's log message with an OSC
// sequence (it retitled the terminal), CSI, C1 and a bidi override is
// escaped in both formats; the JSON stays valid with the same value.
func TestAttackLogEscapes(t *testing.T) {
	hostile := "ok \x1b]0;pwned\x07 \x1b[2J \u009b \u202eevil"
	for _, format := range []string{FormatConsole, FormatJSON} {
		var b bytes.Buffer
		l, err := New(&b, format, "info", WithoutTimestamps())
		if err != nil {
			t.Fatal(err)
		}
		l.Info().Str("plugin", "governor/x\x1b[31m").Msg(hostile)
		out := b.String()
		if strings.ContainsAny(out, "\x1b\x07\u009b\u202e") {
			t.Errorf("%s: raw control reached the log: %q", format, out)
		}
		if format == FormatJSON {
			var m map[string]string
			if err := json.Unmarshal(b.Bytes(), &m); err != nil || m["message"] != hostile {
				t.Errorf("JSON %q: %v, message %q", out, err, m["message"])
			}
		}
	}
}

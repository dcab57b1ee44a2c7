package logging

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/sdk/pluginlog"
)

// DefaultTailLines is how many stderr lines a PluginOutput keeps for
// sdk.TransportError.
const DefaultTailLines = 20

// maxLine bounds a buffered partial line; a longer line is logged in pieces.
const maxLine = 1 << 20

// PluginOutput receives everything a plugin process writes: its real stderr
// (go-plugin ClientConfig.Stderr), where the plugin's logger writes zerolog
// JSON, and the os.Stdout/os.Stderr it has after go-plugin's Serve
// (ClientConfig.SyncStdout/SyncStderr). Each complete line is re-logged on the
// host logger with plugin=NAME:
//
//   - a zerolog JSON object at its own level, with its message and fields in
//     their order (level, message and time are consumed; a "plugin" field is
//     replaced by the host's);
//   - an hclog JSON object (@level, @message) the same way;
//   - any other text at info, or at the level of an hclog "[LEVEL]" prefix;
//     a line starting "panic: " or "fatal error: " (a Go crash dump) is an
//     error, and the dump's later lines (the stacks) are kept for Crash and
//     logged at debug only: the host shows them once, in its error report.
//
// Lines from the post-Serve streams carry stream=stdout or stream=stderr. The
// last lines of all streams are kept for Tail. Safe for concurrent use.
type PluginOutput struct {
	log zerolog.Logger

	mu    sync.Mutex
	tail  []string // ring of the last lines
	next  int      // index in tail of the next line to write
	full  bool     // the ring has wrapped
	crash []string // the stack lines of a Go crash dump, up to maxCrashLines
}

// maxCrashLines bounds the crash dump kept (a fatal error lists every
// goroutine).
const maxCrashLines = 120

// Crash returns the stack lines of the Go crash dump the process wrote, if
// it wrote one: from the first "goroutine N [...]:" line on, blank lines
// dropped.
func (o *PluginOutput) Crash() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.crash...)
}

func (o *PluginOutput) addCrash(line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if strings.TrimSpace(line) == "" || len(o.crash) >= maxCrashLines {
		return
	}
	if len(o.crash) == 0 && !strings.HasPrefix(line, "goroutine ") {
		return
	}
	o.crash = append(o.crash, line)
}

// NewPluginOutput returns a PluginOutput logging on host with plugin=name and
// keeping the last keep lines (DefaultTailLines if keep <= 0).
func NewPluginOutput(host zerolog.Logger, name string, keep int) *PluginOutput {
	if keep <= 0 {
		keep = DefaultTailLines
	}
	return &PluginOutput{log: host.With().Str("plugin", name).Logger(), tail: make([]string, keep)}
}

// Stderr returns the writer for the process's real stderr.
func (o *PluginOutput) Stderr() io.Writer { return &lineWriter{o: o} }

// SyncStdout returns the writer for the plugin's os.Stdout after Serve.
func (o *PluginOutput) SyncStdout() io.Writer { return &lineWriter{o: o, stream: "stdout"} }

// SyncStderr returns the writer for the plugin's os.Stderr after Serve.
func (o *PluginOutput) SyncStderr() io.Writer { return &lineWriter{o: o, stream: "stderr"} }

// Tail returns the last lines written, oldest first.
func (o *PluginOutput) Tail() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.full {
		return append([]string(nil), o.tail[:o.next]...)
	}
	out := make([]string, 0, len(o.tail))
	out = append(out, o.tail[o.next:]...)
	return append(out, o.tail[:o.next]...)
}

// remember adds a line to the tail.
func (o *PluginOutput) remember(line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tail[o.next] = line
	o.next++
	if o.next == len(o.tail) {
		o.next, o.full = 0, true
	}
}

// lineWriter splits one stream into lines. go-plugin writes a line and its
// newline in separate calls, so partial lines are buffered.
type lineWriter struct {
	o       *PluginOutput
	stream  string
	mu      sync.Mutex
	buf     []byte
	inPanic bool
}

// Write implements io.Writer.
func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			if len(w.buf) >= maxLine {
				w.line(w.buf)
				w.buf = w.buf[:0]
			}
			break
		}
		if len(w.buf) > 0 {
			w.buf = append(w.buf, p[:i]...)
			w.line(w.buf)
			w.buf = w.buf[:0]
		} else {
			w.line(p[:i])
		}
		p = p[i+1:]
	}
	return n, nil
}

// line logs one complete line.
func (w *lineWriter) line(b []byte) {
	b = bytes.TrimRight(b, "\r")
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	w.o.remember(string(b))
	if lvl, msg, fields, ok := parseJSONLine(b); ok {
		e := w.o.log.WithLevel(lvl)
		keys := pluginlog.NewKeys("plugin")
		if w.stream != "" {
			e = e.Str(keys.Claim("stream", "plugin."), w.stream)
		}
		for _, f := range fields {
			// A plugin field whose key the host already wrote (or the
			// plugin wrote twice) keeps its value under plugin.KEY.
			e = e.RawJSON(keys.Claim(f.key, "plugin."), f.value)
		}
		e.Msg(msg)
		return
	}
	s := string(b)
	lvl := zerolog.InfoLevel
	switch {
	case strings.HasPrefix(s, "panic: "), strings.HasPrefix(s, "fatal error: "):
		w.inPanic = true
		lvl = zerolog.ErrorLevel
	case w.inPanic:
		w.o.addCrash(s)
		lvl = zerolog.DebugLevel
	default:
		for _, p := range hclogPrefixes {
			if strings.HasPrefix(s, p.prefix) {
				lvl = p.level
				s = strings.TrimSpace(s[len(p.prefix):])
				break
			}
		}
	}
	e := w.o.log.WithLevel(lvl)
	if w.stream != "" {
		e = e.Str("stream", w.stream)
	}
	e.Msg(s)
}

// hclogPrefixes are the level prefixes of hclog's text format.
var hclogPrefixes = []struct {
	prefix string
	level  zerolog.Level
}{
	{"[TRACE]", zerolog.TraceLevel},
	{"[DEBUG]", zerolog.DebugLevel},
	{"[INFO]", zerolog.InfoLevel},
	{"[WARN]", zerolog.WarnLevel},
	{"[ERROR]", zerolog.ErrorLevel},
}

type field struct {
	key   string
	value json.RawMessage
}

// parseJSONLine parses a zerolog (level, message, time) or hclog (@level,
// @message, @timestamp) JSON line, keeping the other fields in order. A JSON
// object without a known level is logged at info; anything that is not one
// JSON object is not a log line (ok false).
func parseJSONLine(b []byte) (lvl zerolog.Level, msg string, fields []field, ok bool) {
	if len(b) == 0 || b[0] != '{' {
		return 0, "", nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, "", nil, false
	}
	lvl = zerolog.InfoLevel
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, "", nil, false
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, "", nil, false
		}
		switch key {
		case zerolog.LevelFieldName, "@level":
			var s string
			if json.Unmarshal(raw, &s) == nil {
				if l, err := zerolog.ParseLevel(strings.ToLower(s)); err == nil && l != zerolog.NoLevel {
					lvl = l
				}
			}
		case zerolog.MessageFieldName, "@message":
			if json.Unmarshal(raw, &msg) != nil {
				msg = string(raw)
			}
		case zerolog.TimestampFieldName, "@timestamp", "@module", "@caller", "plugin":
			// The host stamps and tags the line itself.
		default:
			fields = append(fields, field{key, raw})
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return 0, "", nil, false
	}
	if len(bytes.TrimSpace(b[dec.InputOffset():])) != 0 {
		return 0, "", nil, false
	}
	return lvl, msg, fields, true
}

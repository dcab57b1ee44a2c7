package pluginlog

import (
	"bytes"
	"fmt"
	"io"
	"log"

	"github.com/hashicorp/go-hclog"
	"github.com/rs/zerolog"
)

// HCLog adapts l to the hclog.Logger go-plugin logs through (ClientConfig.Logger
// on the host, ServeConfig.Logger in a plugin process).
//
// Levels map one to one, except that go-plugin's Info messages (a plugin
// process started or exited) are routine and logged at debug. GetLevel always
// reports hclog.Off: go-plugin reads it only to decide whether to parse the
// plugin's stderr lines itself, and PluginOutput does that instead (see the
// package doc). SetLevel is ignored; the zerolog logger's level rules.
//
// contextKeys names the fields l already carries (l.With()...): zerolog
// cannot be asked, and a JSON record must never repeat a key, so a pair whose
// key is taken is written as "hclog.KEY" (go-plugin's "plugin" pair is the
// binary's path, while the host's plugin field is KIND/NAME).
func HCLog(l zerolog.Logger, contextKeys ...string) hclog.Logger {
	return &hcLogger{l: l, taken: contextKeys}
}

type hcLogger struct {
	l     zerolog.Logger
	name  string
	args  []any    // implied key/value pairs from With
	taken []string // keys of l's context
}

var _ hclog.Logger = (*hcLogger)(nil)

func (h *hcLogger) Log(level hclog.Level, msg string, args ...any) {
	var lvl zerolog.Level
	switch level {
	case hclog.Trace:
		lvl = zerolog.TraceLevel
	case hclog.Debug, hclog.Info:
		lvl = zerolog.DebugLevel
	case hclog.Warn:
		lvl = zerolog.WarnLevel
	case hclog.Error:
		lvl = zerolog.ErrorLevel
	case hclog.Off:
		return
	default:
		lvl = zerolog.DebugLevel
	}
	e := h.l.WithLevel(lvl)
	if !e.Enabled() {
		return
	}
	keys := NewKeys(h.taken...)
	if h.name != "" {
		e = e.Str(keys.Claim("logger", "hclog."), h.name)
	}
	e = addPairs(addPairs(e, h.args, keys), args, keys)
	e.Msg(msg)
}

// addPairs adds hclog key/value pairs as fields, as hclog itself does with an
// odd one out (EXTRA_VALUE_AT_END); keys already in the record are renamed
// (Keys).
func addPairs(e *zerolog.Event, kv []any, keys Keys) *zerolog.Event {
	for i := 0; i < len(kv); i += 2 {
		if i+1 == len(kv) {
			e = e.Interface(keys.Claim(hclog.MissingKey, "hclog."), kv[i])
			break
		}
		key, ok := kv[i].(string)
		if !ok {
			key = fmt.Sprint(kv[i])
		}
		key = keys.Claim(key, "hclog.")
		switch v := kv[i+1].(type) {
		case error:
			e = e.AnErr(key, v)
		case fmt.Stringer:
			e = e.Stringer(key, v)
		default:
			e = e.Interface(key, v)
		}
	}
	return e
}

func (h *hcLogger) Trace(msg string, args ...any) { h.Log(hclog.Trace, msg, args...) }
func (h *hcLogger) Debug(msg string, args ...any) { h.Log(hclog.Debug, msg, args...) }
func (h *hcLogger) Info(msg string, args ...any)  { h.Log(hclog.Info, msg, args...) }
func (h *hcLogger) Warn(msg string, args ...any)  { h.Log(hclog.Warn, msg, args...) }
func (h *hcLogger) Error(msg string, args ...any) { h.Log(hclog.Error, msg, args...) }

func (h *hcLogger) IsTrace() bool { return h.l.GetLevel() <= zerolog.TraceLevel }
func (h *hcLogger) IsDebug() bool { return h.l.GetLevel() <= zerolog.DebugLevel }
func (h *hcLogger) IsInfo() bool  { return h.l.GetLevel() <= zerolog.DebugLevel }
func (h *hcLogger) IsWarn() bool  { return h.l.GetLevel() <= zerolog.WarnLevel }
func (h *hcLogger) IsError() bool { return h.l.GetLevel() <= zerolog.ErrorLevel }

func (h *hcLogger) ImpliedArgs() []any { return h.args }

func (h *hcLogger) With(args ...any) hclog.Logger {
	c := *h
	c.args = append(append([]any(nil), h.args...), args...)
	return &c
}

func (h *hcLogger) Name() string { return h.name }

func (h *hcLogger) Named(name string) hclog.Logger {
	c := *h
	if c.name != "" {
		c.name += "." + name
	} else {
		c.name = name
	}
	return &c
}

func (h *hcLogger) ResetNamed(name string) hclog.Logger {
	c := *h
	c.name = name
	return &c
}

func (h *hcLogger) SetLevel(hclog.Level) {}

func (h *hcLogger) GetLevel() hclog.Level { return hclog.Off }

func (h *hcLogger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(h.StandardWriter(opts), "", 0)
}

func (h *hcLogger) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	level := hclog.Info
	if opts != nil && opts.ForceLevel != hclog.NoLevel {
		level = opts.ForceLevel
	}
	return stdWriter{h: h, level: level}
}

// stdWriter logs each write of a standard library logger as one message.
type stdWriter struct {
	h     *hcLogger
	level hclog.Level
}

func (w stdWriter) Write(p []byte) (int, error) {
	w.h.Log(w.level, string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

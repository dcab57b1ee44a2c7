package logging

import (
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"golang.org/x/term"

	"github.com/tickemu/tickemu/framework/termtext"
)

// Formats accepted by New.
const (
	FormatAuto    = "auto"    // console on a terminal, JSON otherwise
	FormatConsole = "console" // human-readable lines
	FormatJSON    = "json"    // one zerolog JSON object per line
)

// Option adjusts New.
type Option func(*options)

type options struct {
	noTimestamps bool
	noColor      bool
}

// WithoutTimestamps leaves out wall-clock timestamps, for output compared
// byte for byte (golden files, testscript).
func WithoutTimestamps() Option { return func(o *options) { o.noTimestamps = true } }

// WithoutColor turns off console colours (NO_COLOR; the CLI decides).
func WithoutColor() Option { return func(o *options) { o.noColor = true } }

// New returns a logger writing to w in format ("auto", "console" or "json")
// at level (a zerolog level name: "trace", "debug", "info", "warn", "error",
// "disabled"; "" means "info"). Colours are used only on a terminal.
func New(w io.Writer, format, level string, opts ...Option) (zerolog.Logger, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	lvl, err := ParseLevel(level)
	if err != nil {
		return zerolog.Nop(), err
	}
	tty := isTerminal(w)
	switch format {
	case FormatAuto:
		if tty {
			format = FormatConsole
		} else {
			format = FormatJSON
		}
	case FormatConsole, FormatJSON:
	default:
		return zerolog.Nop(), fmt.Errorf("logging: unknown log format %q (want auto, console or json)", format)
	}
	// Messages and values may come from a plugin, a configuration or a
	// capture: a terminal must not act on them (termtext).
	out := io.Writer(jsonSafe{w})
	if format == FormatConsole {
		cw := zerolog.ConsoleWriter{Out: w, NoColor: o.noColor || !tty, TimeFormat: "15:04:05.000",
			FormatMessage:       safeValue,
			FormatFieldValue:    safeValue,
			FormatErrFieldValue: safeValue}
		if o.noTimestamps {
			cw.PartsExclude = []string{zerolog.TimestampFieldName}
		}
		out = cw
	}
	l := zerolog.New(out).Level(lvl)
	if !o.noTimestamps {
		l = l.With().Timestamp().Logger()
	}
	return l, nil
}

// ParseLevel parses a zerolog level name; "" is info.
func ParseLevel(level string) (zerolog.Level, error) {
	if level == "" {
		return zerolog.InfoLevel, nil
	}
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || lvl == zerolog.NoLevel {
		return zerolog.NoLevel, fmt.Errorf("logging: unknown log level %q (want trace, debug, info, warn, error or disabled)", level)
	}
	return lvl, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// safeValue prints a console log line's message or value with termtext.
func safeValue(i any) string {
	if i == nil {
		return ""
	}
	return termtext.Safe(fmt.Sprint(i))
}

// jsonSafe writes zerolog's JSON lines with the C1 controls and the bidi
// controls escaped (\u009b, \u202e): zerolog escapes the C0 controls only,
// and a terminal showing the log acts on the others. Outside the ASCII
// range a character can only be inside a JSON string, so the escape keeps
// the line valid JSON with the same value.
type jsonSafe struct{ w io.Writer }

func (j jsonSafe) Write(p []byte) (int, error) {
	if termtext.Clean(string(p)) {
		return j.w.Write(p)
	}
	var b []byte
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		if r >= 0x80 && termtext.Unsafe(r) {
			b = fmt.Appendf(b, `\u%04x`, r)
		} else {
			b = append(b, p[i:i+size]...)
		}
		i += size
	}
	if _, err := j.w.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

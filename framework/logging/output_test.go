package logging

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// hostJSON is a host logger writing JSON without timestamps at level.
func hostJSON(b *bytes.Buffer, level zerolog.Level) zerolog.Logger {
	return zerolog.New(b).Level(level)
}

func TestPluginOutput(t *testing.T) {
	tests := []struct {
		name   string
		stream string   // "", "stdout", "stderr"
		writes []string // as the plugin side delivers them
		host   zerolog.Level
		want   string
	}{
		{
			name:   "error survives an info host",
			writes: []string{`{"level":"error","cpu":3,"message":"comparator lost"}`, "\n"},
			host:   zerolog.InfoLevel,
			want:   `{"level":"error","plugin":"clockevent/hpet","cpu":3,"message":"comparator lost"}` + "\n",
		},
		{
			name:   "debug dropped by an info host",
			writes: []string{`{"level":"debug","message":"programmed"}` + "\n"},
			host:   zerolog.InfoLevel,
			want:   "",
		},
		{
			name:   "fields keep their order; time and plugin are the host's",
			writes: []string{`{"level":"warn","plugin":"x","zeta":1,"time":"2026-01-01T00:00:00Z","alpha":{"a":[1,2]},"sim_ns":5,"message":"late"}` + "\n"},
			host:   zerolog.DebugLevel,
			want:   `{"level":"warn","plugin":"clockevent/hpet","zeta":1,"alpha":{"a":[1,2]},"sim_ns":5,"message":"late"}` + "\n",
		},
		{
			name:   "line split over writes",
			writes: []string{`{"level":"inf`, `o","message":"a"}`, "\n", `{"level":"info","message":"b"}` + "\n" + `{"level":"info","message":"c"}` + "\n"},
			host:   zerolog.InfoLevel,
			want: `{"level":"info","plugin":"clockevent/hpet","message":"a"}` + "\n" +
				`{"level":"info","plugin":"clockevent/hpet","message":"b"}` + "\n" +
				`{"level":"info","plugin":"clockevent/hpet","message":"c"}` + "\n",
		},
		{
			name:   "hclog JSON",
			writes: []string{`{"@level":"error","@message":"plugin died","@timestamp":"2026-01-01T00:00:00.000000Z","@module":"p","pid":9}` + "\n"},
			host:   zerolog.InfoLevel,
			want:   `{"level":"error","plugin":"clockevent/hpet","pid":9,"message":"plugin died"}` + "\n",
		},
		{
			name:   "text with hclog level prefix",
			writes: []string{"[WARN] something odd\n", "[DEBUG] chatter\n"},
			host:   zerolog.InfoLevel,
			want:   `{"level":"warn","plugin":"clockevent/hpet","message":"something odd"}` + "\n",
		},
		{
			name:   "plain text at info, blank lines skipped",
			writes: []string{"hello from fmt\r\n", "\n", "   \n"},
			host:   zerolog.InfoLevel,
			want:   `{"level":"info","plugin":"clockevent/hpet","message":"hello from fmt"}` + "\n",
		},
		{
			// The stack is shown once, in the error report (Crash), so the
			// log has it at debug only.
			name:   "Go crash dump is an error",
			writes: []string{"panic: runtime error: index out of range\n", "\n", "goroutine 1 [running]:\n", "main.main()\n"},
			host:   zerolog.InfoLevel,
			want:   `{"level":"error","plugin":"clockevent/hpet","message":"panic: runtime error: index out of range"}` + "\n",
		},
		{
			name:   "Go crash dump's stack at debug",
			writes: []string{"fatal error: concurrent map writes\n", "goroutine 7 [running]:\n"},
			host:   zerolog.DebugLevel,
			want: `{"level":"error","plugin":"clockevent/hpet","message":"fatal error: concurrent map writes"}` + "\n" +
				`{"level":"debug","plugin":"clockevent/hpet","message":"goroutine 7 [running]:"}` + "\n",
		},
		{
			name:   "not one JSON object",
			writes: []string{`{"level":"error"} trailing` + "\n", `{"level":` + "\n"},
			host:   zerolog.InfoLevel,
			want: `{"level":"info","plugin":"clockevent/hpet","message":"{\"level\":\"error\"} trailing"}` + "\n" +
				`{"level":"info","plugin":"clockevent/hpet","message":"{\"level\":"}` + "\n",
		},
		{
			name:   "post-Serve stdout is tagged",
			stream: "stdout",
			writes: []string{"stray print\n", `{"level":"error","message":"boom"}` + "\n"},
			host:   zerolog.InfoLevel,
			want: `{"level":"info","plugin":"clockevent/hpet","stream":"stdout","message":"stray print"}` + "\n" +
				`{"level":"error","plugin":"clockevent/hpet","stream":"stdout","message":"boom"}` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			o := NewPluginOutput(hostJSON(&b, tt.host), "clockevent/hpet", 0)
			w := o.Stderr()
			switch tt.stream {
			case "stdout":
				w = o.SyncStdout()
			case "stderr":
				w = o.SyncStderr()
			}
			for _, s := range tt.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write(%q) = %d, %v, want %d, nil", s, n, err, len(s))
				}
			}
			if got := b.String(); got != tt.want {
				t.Errorf("host log after %q =\n%s\nwant\n%s", tt.writes, got, tt.want)
			}
		})
	}
}

func TestPluginOutputCrash(t *testing.T) {
	o := NewPluginOutput(zerolog.Nop(), "clockevent/hpet", 0)
	w := o.Stderr()
	for _, s := range []string{"starting\n", "panic: boom\n", "\n", "goroutine 1 [running]:\n", "main.main()\n", "\t/src/main.go:9 +0x1d\n"} {
		w.Write([]byte(s))
	}
	got := strings.Join(o.Crash(), "|")
	if want := "goroutine 1 [running]:|main.main()|\t/src/main.go:9 +0x1d"; got != want {
		t.Errorf("Crash() = %q, want %q", got, want)
	}
	if c := NewPluginOutput(zerolog.Nop(), "x", 0).Crash(); len(c) != 0 {
		t.Errorf("Crash() without a crash = %q", c)
	}
}

func TestPluginOutputTail(t *testing.T) {
	var b bytes.Buffer
	o := NewPluginOutput(hostJSON(&b, zerolog.Disabled), "p", 3)
	if got := o.Tail(); len(got) != 0 {
		t.Errorf("Tail() of a fresh output = %q, want none", got)
	}
	w := o.Stderr()
	for _, s := range []string{"one\n", "two\n", "three\n"} {
		_, _ = w.Write([]byte(s))
	}
	if got, want := o.Tail(), []string{"one", "two", "three"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Tail() = %q, want %q", got, want)
	}
	_, _ = o.SyncStderr().Write([]byte("four\nfive\n"))
	_, _ = w.Write([]byte("partial"))
	if got, want := o.Tail(), []string{"three", "four", "five"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Tail() = %q, want %q", got, want)
	}
}

func TestPluginOutputLongLine(t *testing.T) {
	var b bytes.Buffer
	o := NewPluginOutput(hostJSON(&b, zerolog.InfoLevel), "p", 2)
	w := o.Stderr()
	// A line that grows past maxLine is logged as it stands, and the rest of
	// it as another record, so a plugin cannot make the host buffer without
	// bound.
	long := strings.Repeat("x", maxLine)
	_, _ = w.Write([]byte(long[:maxLine/2]))
	_, _ = w.Write([]byte(long[maxLine/2:]))
	_, _ = w.Write([]byte("yyy\n"))
	if got := strings.Count(b.String(), "\n"); got != 2 {
		t.Errorf("a %d-byte line was logged as %d records, want 2 (split at %d)", maxLine+3, got, maxLine)
	}
	if got := o.Tail(); len(got) != 2 || got[1] != "yyy" {
		t.Errorf("Tail() ends %q, want the rest of the line, \"yyy\"", got[len(got)-1])
	}
}

package contract_test

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/tickemu/tickemu/framework/contract"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// answers hands out a fuzz input as a plugin's answers, 8 bytes at a time
// (zero once used up).
type answers struct{ b []byte }

func (a *answers) u64() uint64 {
	var w [8]byte
	n := copy(w[:], a.b)
	a.b = a.b[n:]
	return binary.LittleEndian.Uint64(w[:])
}

func (a *answers) i64() int64 { return int64(a.u64()) }

// text is a short string cut from the input, any bytes.
func (a *answers) text() string {
	n := int(a.u64() % 80)
	n = min(n, len(a.b))
	s := string(a.b[:n])
	a.b = a.b[n:]
	return s
}

// fuzzDevice is a clockevent device whose every answer comes from the input.
type fuzzDevice struct{ a *answers }

func (d fuzzDevice) Info() sdk.Info {
	return sdk.Info{Kind: sdk.KindClockEvent, Name: "fuzz", Version: "1"}
}
func (d fuzzDevice) Schema() sdk.Schema { return sdk.Schema{} }
func (d fuzzDevice) Configure(sdk.Setup, sdk.Config) sdk.Diagnostics {
	var ds sdk.Diagnostics
	for range d.a.u64() % 4 {
		ds = append(ds, sdk.Diagnostic{Severity: sdk.Severity(d.a.u64() % 3), Summary: d.a.text(), Detail: d.a.text(), Attribute: d.a.text()})
	}
	return ds
}
func (d fuzzDevice) Counters() []sdk.Counter {
	var cs []sdk.Counter
	for range d.a.u64() % 6 {
		cs = append(cs, sdk.Counter{Name: d.a.text(), CPU: int(int8(d.a.u64())), Value: d.a.i64()})
	}
	return cs
}
func (d fuzzDevice) Spec() sdk.DeviceSpec {
	return sdk.DeviceSpec{Name: d.a.text(), FreqHz: math.Float64frombits(d.a.u64()), MinDeltaTicks: d.a.u64(), MaxDeltaTicks: d.a.u64(),
		Channels: int(d.a.i64()), Mult: uint32(d.a.u64()), Shift: uint32(d.a.u64())}
}
func (d fuzzDevice) SetNextEvent(int, ktime.Time, uint64) sdk.ProgramResult {
	return sdk.ProgramResult{ETIME: d.a.u64()%2 == 0, FireAt: ktime.Time(d.a.i64()), Cost: d.a.i64()}
}
func (d fuzzDevice) SetState(int, ktime.Time, sdk.DeviceState, int64) (int64, ktime.Time) {
	return d.a.i64(), ktime.Time(d.a.i64())
}
func (d fuzzDevice) Ack(int, ktime.Time) (int64, ktime.Time) { return d.a.i64(), ktime.Time(d.a.i64()) }

// printable is the contract's rule for names and messages, restated.
func printable(s string, maxLen int, multiline bool) bool {
	if len(s) > maxLen || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && !(multiline && (r == '\n' || r == '\t')) {
			return false
		}
	}
	return true
}

func costOK(c int64) bool { return c >= 0 && c <= contract.MaxCost }

// FuzzContract feeds a clockevent plugin's answers from the input through
// the contract checker. Each answer is either accepted, and then satisfies
// the contract as restated here (an independent oracle), or refused with a
// *sdk.ContractError whose message holds no control character; never any
// other panic.
func FuzzContract(f *testing.F) {
	le := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
		return b
	}
	// The lies: an interrupt in the past or at now, NaN frequency,
	// 1<<30 channels, costs of -1e12 and MaxInt64, a counter name with ANSI
	// escapes.
	f.Add(byte(1), int64(1000), le(1, 999, 100))
	f.Add(byte(1), int64(1000), le(1, 1000, 100))
	f.Add(byte(0), int64(0), append(le(4), append([]byte("lapic"), le(math.Float64bits(math.NaN()), 1, 10, 1<<30)...)...))
	f.Add(byte(2), int64(5), le(uint64(1e12)^(1<<63), 10))
	f.Add(byte(3), int64(5), le(math.MaxInt64, 10))
	f.Add(byte(4), int64(0), append(le(1, 12), []byte("a\x1b[2J\nforged")...))
	f.Add(byte(5), int64(0), append(le(2, 1, 5), []byte("bad\x00")...))
	f.Fuzz(func(t *testing.T, call byte, now int64, b []byte) {
		a := &answers{b: b}
		const cpus = 4
		p := contract.Wrap(sdk.KindClockEvent, "fuzz", fuzzDevice{a}, contract.Limits{CPUs: cpus})
		d := p.(sdk.ClockEventDevice)
		at := ktime.Time(now)
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			var ce *sdk.ContractError
			err, isErr := r.(error)
			if !isErr || !errors.As(err, &ce) {
				panic(r)
			}
			if msg := ce.Error(); strings.ContainsFunc(msg, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Errorf("ContractError message holds a control character: %q", msg)
			}
		}()
		switch call % 6 {
		case 0:
			s := d.Spec()
			if !printable(s.Name, contract.MaxNameLen, false) || math.IsNaN(s.FreqHz) || s.FreqHz <= 0 || s.FreqHz > contract.MaxFreqHz ||
				s.MinDeltaTicks < 1 || s.MaxDeltaTicks < s.MinDeltaTicks || s.Channels < 1 || s.Channels > max(cpus, contract.MaxComparators) ||
				(s.Mult != 0 && s.Shift > 32) {
				t.Errorf("Spec %+v accepted", s)
			}
		case 1:
			r := d.SetNextEvent(0, at, 1)
			if !costOK(r.Cost) || (!r.ETIME && r.FireAt <= at) {
				t.Errorf("SetNextEvent at %d: %+v accepted", at, r)
			}
		case 2:
			cost, first := d.SetState(0, at, sdk.DeviceState(1), 1000)
			if !costOK(cost) || first < at {
				t.Errorf("SetState at %d: cost %d, first %d accepted", at, cost, first)
			}
		case 3:
			cost, next := d.Ack(0, at)
			if !costOK(cost) || next <= at {
				t.Errorf("Ack at %d: cost %d, next %d accepted", at, cost, next)
			}
		case 4:
			cs := d.Counters()
			if len(cs) > contract.MaxCountersPerCPU*(cpus+1) {
				t.Errorf("%d counters accepted", len(cs))
			}
			for _, c := range cs {
				if c.Name == "" || !printable(c.Name, contract.MaxNameLen, false) || c.CPU < -1 || c.CPU >= cpus {
					t.Errorf("counter %+v accepted", c)
				}
			}
		case 5:
			for _, dg := range d.Configure(sdk.Setup{CPUs: cpus}, sdk.Config{}) {
				if !printable(dg.Summary, contract.MaxTextLen, true) || !printable(dg.Detail, contract.MaxTextLen, true) {
					t.Errorf("diagnostic %+v accepted", dg)
				}
			}
		}
	})
}

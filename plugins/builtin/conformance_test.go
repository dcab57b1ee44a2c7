package builtin

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/sdktest"
)

// TestConformance runs every builtin through its kind's conformance suite,
// linked in process and over an in-process go-plugin gRPC pair (the same
// shims a plugin process uses), so both transports meet the same contract.
func TestConformance(t *testing.T) {
	transports := []struct {
		name string
		open func(t testing.TB, f sdk.Factory) sdk.Plugin
	}{
		{"inprocess", func(_ testing.TB, f sdk.Factory) sdk.Plugin { return f.New() }},
		{"grpc", sdktest.GRPCPair},
	}
	for _, f := range Factories() {
		for _, tr := range transports {
			t.Run(string(f.Kind)+"/"+f.Name+"/"+tr.name, func(t *testing.T) {
				switch f.Kind {
				case sdk.KindTimerBase:
					sdktest.RunTimerBase(t, func(t *testing.T) sdk.TimerBase { return tr.open(t, f).(sdk.TimerBase) })
				case sdk.KindHRTimer:
					sdktest.RunHRTimerBase(t, func(t *testing.T) sdk.HRTimerBase { return tr.open(t, f).(sdk.HRTimerBase) })
				case sdk.KindClockEvent:
					sdktest.RunClockEventDevice(t, func(t *testing.T, role sdk.Role) sdk.ClockEventDevice {
						return tr.open(t, f).(sdk.ClockEventDevice)
					})
				case sdk.KindGovernor:
					sdktest.RunGovernor(t, func(t *testing.T) sdk.Governor { return tr.open(t, f).(sdk.Governor) })
				case sdk.KindHangPolicy:
					sdktest.RunHangPolicy(t, func(t *testing.T) sdk.HangPolicy { return tr.open(t, f).(sdk.HangPolicy) })
				case sdk.KindCatchupPolicy:
					sdktest.RunCatchupPolicy(t, func(t *testing.T) sdk.CatchupPolicy { return tr.open(t, f).(sdk.CatchupPolicy) })
				case sdk.KindRestartPolicy:
					sdktest.RunRestartPolicy(t, func(t *testing.T) sdk.RestartPolicy { return tr.open(t, f).(sdk.RestartPolicy) })
				default:
					t.Fatalf("builtin %s has kind %q with no conformance suite", f.Name, f.Kind)
				}
			})
		}
	}
}

// TestFactories: names are unique per kind and each factory's plugin reports
// the kind and name it is registered under.
func TestFactories(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Factories() {
		key := string(f.Kind) + "/" + f.Name
		if seen[key] {
			t.Errorf("builtin %s listed twice", key)
		}
		seen[key] = true
		info := f.New().Info()
		if info.Kind != f.Kind || info.Name != f.Name || info.Version == "" {
			t.Errorf("builtin %s reports %+v", key, info)
		}
	}
}

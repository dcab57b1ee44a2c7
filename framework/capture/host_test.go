package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/bundle"
)

const kvmRelease = "6.18.44-fc-v1272"

// fakeRoot copies testdata/host/kvm618 into a temporary directory, adds
// /dev/cpu_dma_latency (2000000000: no constraint) and applies edits: a
// path to new contents, or to nil to delete the file (or directory).
func fakeRoot(t *testing.T, edits map[string]*string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata/host/kvm618")); err != nil {
		t.Fatal(err)
	}
	qos := make([]byte, 4)
	binary.NativeEndian.PutUint32(qos, 2000000000)
	write(t, root, "dev/cpu_dma_latency", string(qos))
	for p, v := range edits {
		if v == nil {
			if err := os.RemoveAll(filepath.Join(root, p)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		write(t, root, p, *v)
	}
	return root
}

func write(t *testing.T, root, p, v string) {
	t.Helper()
	path := filepath.Join(root, p)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
		t.Fatal(err)
	}
}

func s(v string) *string { return &v }

func gz(t *testing.T, text string) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(text))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func bootConfig(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/host/kvm618/boot/config-" + kvmRelease)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadHost(t *testing.T) {
	cfg := bootConfig(t)
	noHzFull := strings.NewReplacer("CONFIG_NO_HZ_IDLE=y", "# CONFIG_NO_HZ_IDLE is not set",
		"# CONFIG_NO_HZ_FULL is not set", "CONFIG_NO_HZ_FULL=y").Replace(cfg)
	periodic := strings.NewReplacer("CONFIG_NO_HZ_IDLE=y", "# CONFIG_NO_HZ_IDLE is not set",
		"# CONFIG_HZ_PERIODIC is not set", "CONFIG_HZ_PERIODIC=y", "CONFIG_NO_HZ=y", "# CONFIG_NO_HZ is not set",
		"CONFIG_HIGH_RES_TIMERS=y", "# CONFIG_HIGH_RES_TIMERS is not set", "CONFIG_HZ=250", "CONFIG_HZ=1000").Replace(cfg)
	// 3.x: NO_HZ alone meant idle dynticks.
	old := "CONFIG_NO_HZ=y\nCONFIG_HZ=100\nCONFIG_HIGH_RES_TIMERS=y\n"
	qos0 := string([]byte{0, 0, 0, 0})
	bareFlags := strings.Replace(mustRead(t, "testdata/host/kvm618/proc/cpuinfo"), " hypervisor", "", 1)

	tests := []struct {
		name   string
		edits  map[string]*string
		cpuid  string
		check  func(t *testing.T, h bundle.Host)
		notes  []string // substrings of some note
		errSub string
	}{
		{
			name: "kvm 6.18, config from /boot",
			check: func(t *testing.T, h bundle.Host) {
				want := bundle.Host{
					Release: kvmRelease, Version: "#1 SMP PREEMPT_DYNAMIC @0", Machine: "x86_64",
					CPUModel: "AMD EPYC", Hypervisor: UnknownHypervisor, CmdLine: "console=ttyS0 quiet reboot=k panic=1",
					CPUs: 2, Online: "0-1", HZ: 250, NoHZ: "idle", HighRes: true,
					Config: map[string]string{
						"HZ": "250", "HZ_PERIODIC": "n", "NO_HZ_IDLE": "y", "NO_HZ_FULL": "n", "NO_HZ": "y", "NO_HZ_COMMON": "y",
						"HIGH_RES_TIMERS": "y", "IRQ_TIME_ACCOUNTING": "n", "VIRT_CPU_ACCOUNTING_GEN": "n", "TICK_CPU_ACCOUNTING": "y",
						"PREEMPT": "n", "PREEMPT_NONE": "y", "PREEMPT_VOLUNTARY": "n", "PREEMPT_DYNAMIC": "y", "PREEMPT_RT": "n",
						"RCU_NOCB_CPU": "y", "RCU_LAZY": "y",
					},
					ConfigSource:   "/boot/config-" + kvmRelease,
					TimerMigration: new(int),
					Clocksource:    "tsc", Clockevents: []string{"lapic-deadline", "lapic-deadline"},
					CPUIdle: bundle.CPUIdle{Driver: "haltpoll", Governor: "haltpoll", States: []bundle.IdleState{
						{Name: "POLL", Desc: "CPUIDLE CORE POLL IDLE"},
						{Name: "haltpoll idle", Desc: "default architecture idle", LatencyUS: 1, ResidencyUS: 1},
					}},
					PMQoSLatencyUS: 2000000000,
				}
				*want.TimerMigration = 1
				if !reflect.DeepEqual(h, want) {
					t.Errorf("host =\n%+v\nwant\n%+v", h, want)
				}
			},
		},
		{
			name:  "config.gz wins over /boot",
			edits: map[string]*string{"proc/config.gz": s(gz(t, periodic))},
			check: func(t *testing.T, h bundle.Host) {
				if h.ConfigSource != "/proc/config.gz" || h.HZ != 1000 || h.NoHZ != "off" || h.HighRes || h.Config["HZ_PERIODIC"] != "y" {
					t.Errorf("source %q HZ %d NoHZ %q highres %v", h.ConfigSource, h.HZ, h.NoHZ, h.HighRes)
				}
			},
		},
		{
			name:  "no configuration anywhere",
			edits: map[string]*string{"boot": nil},
			check: func(t *testing.T, h bundle.Host) {
				if h.HZ != 0 || h.NoHZ != "" || h.Config != nil || h.ConfigSource != "" {
					t.Errorf("HZ %d NoHZ %q config %v source %q: want them unknown", h.HZ, h.NoHZ, h.Config, h.ConfigSource)
				}
			},
			notes: []string{"no kernel configuration", "/boot/config-" + kvmRelease},
		},
		{
			name: "nohz_full kernel and CPUs",
			edits: map[string]*string{"boot/config-" + kvmRelease: s(noHzFull),
				"sys/devices/system/cpu/nohz_full": s("1\n"), "sys/devices/system/cpu/isolated": s("1\n")},
			check: func(t *testing.T, h bundle.Host) {
				if h.NoHZ != "full" || h.NohzFull != "1" || h.Isolated != "1" {
					t.Errorf("NoHZ %q nohz_full %q isolated %q", h.NoHZ, h.NohzFull, h.Isolated)
				}
			},
		},
		{
			name:  "NO_HZ_FULL built but not booted with nohz_full=",
			edits: map[string]*string{"sys/devices/system/cpu/nohz_full": s("(null)\n")},
			check: func(t *testing.T, h bundle.Host) {
				if h.NohzFull != "" {
					t.Errorf("nohz_full %q, want empty", h.NohzFull)
				}
			},
		},
		{
			name:  "3.x NO_HZ",
			edits: map[string]*string{"boot/config-" + kvmRelease: s(old)},
			check: func(t *testing.T, h bundle.Host) {
				if h.NoHZ != "idle" || h.HZ != 100 || h.Config["NO_HZ_IDLE"] != "n" {
					t.Errorf("NoHZ %q HZ %d NO_HZ_IDLE %q", h.NoHZ, h.HZ, h.Config["NO_HZ_IDLE"])
				}
			},
		},
		{
			name:  "hypervisor from CPUID",
			cpuid: "KVMKVMKVM\x00\x00\x00",
			check: func(t *testing.T, h bundle.Host) {
				if h.Hypervisor != "KVM" {
					t.Errorf("hypervisor %q", h.Hypervisor)
				}
			},
		},
		{
			name:  "Xen names itself in sysfs",
			cpuid: "XenVMMXenVMM",
			edits: map[string]*string{"sys/hypervisor/type": s("xen\n")},
			check: func(t *testing.T, h bundle.Host) {
				if h.Hypervisor != "xen" {
					t.Errorf("hypervisor %q", h.Hypervisor)
				}
			},
		},
		{
			name:  "QEMU in DMI",
			edits: map[string]*string{"sys/class/dmi/id/sys_vendor": s("QEMU\n")},
			check: func(t *testing.T, h bundle.Host) {
				if h.Hypervisor != "KVM" {
					t.Errorf("hypervisor %q", h.Hypervisor)
				}
			},
		},
		{
			name:  "bare metal",
			cpuid: "KVMKVMKVM",
			edits: map[string]*string{"proc/cpuinfo": s(bareFlags)},
			check: func(t *testing.T, h bundle.Host) {
				if h.Hypervisor != "" {
					t.Errorf("hypervisor %q on a CPU without the hypervisor flag", h.Hypervisor)
				}
			},
		},
		{
			name: "older kernel: no timer_migration, no clockevents, no cpuidle",
			edits: map[string]*string{"proc/sys/kernel/timer_migration": nil, "sys/devices/system/clockevents": nil,
				"sys/devices/system/cpu/cpuidle": nil, "sys/devices/system/cpu/cpu0": nil, "proc/sys/kernel/arch": nil},
			check: func(t *testing.T, h bundle.Host) {
				if h.TimerMigration != nil || h.Clockevents != nil || h.CPUIdle.Driver != "" || h.CPUIdle.States != nil || h.Machine != "" {
					t.Errorf("timer_migration %v clockevents %v cpuidle %+v machine %q", h.TimerMigration, h.Clockevents, h.CPUIdle, h.Machine)
				}
			},
			notes: []string{"no /sys/devices/system/clockevents", "no cpuidle driver"},
		},
		{
			name: "four CPUs, broadcast, cyclictest's PM QoS request",
			edits: map[string]*string{"sys/devices/system/cpu/online": s("0-2,5\n"),
				"sys/devices/system/clockevents/clockevent10/current_device": s("lapic\n"),
				"sys/devices/system/clockevents/clockevent2/current_device":  s("lapic\n"),
				"sys/devices/system/clockevents/broadcast/current_device":    s("hpet\n"),
				"dev/cpu_dma_latency": s(qos0)},
			check: func(t *testing.T, h bundle.Host) {
				want := []string{"lapic-deadline", "lapic-deadline", "lapic", "lapic"}
				if h.CPUs != 4 || !reflect.DeepEqual(h.Clockevents, want) || h.Broadcast != "hpet" || h.PMQoSLatencyUS != 0 {
					t.Errorf("CPUs %d clockevents %v broadcast %q PM QoS %d", h.CPUs, h.Clockevents, h.Broadcast, h.PMQoSLatencyUS)
				}
			},
		},
		{
			name:   "unreadable timer_migration",
			edits:  map[string]*string{"proc/sys/kernel/timer_migration": s("on\n")},
			errSub: `timer_migration: "on" is not a number`,
		},
		{
			name:   "bad online list",
			edits:  map[string]*string{"sys/devices/system/cpu/online": s("0-x\n")},
			errSub: `online: cpulist "0-x"`,
		},
		{
			name:   "short PM QoS value",
			edits:  map[string]*string{"dev/cpu_dma_latency": s("ab")},
			errSub: "want a 4-byte integer",
		},
		{
			name:   "config.gz not gzip",
			edits:  map[string]*string{"proc/config.gz": s(cfg)},
			errSub: "config.gz: gzip: invalid header",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeRoot(t, tc.edits)
			h, notes, err := ReadHost(root, tc.cpuid)
			if tc.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSub) {
					t.Fatalf("err = %v, want one with %q", err, tc.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range tc.notes {
				if !strings.Contains(strings.Join(notes, "\n"), n) {
					t.Errorf("notes %q lack %q", notes, n)
				}
			}
			tc.check(t, h)
		})
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"", nil, false},
		{"0", []int{0}, false},
		{"0-3,8,10-11\n", []int{0, 1, 2, 3, 8, 10, 11}, false},
		{"3-1", nil, true},
		{"a", nil, true},
		{"0-", nil, true},
		{"0-99999999", nil, true},
	} {
		got, err := ParseCPUList(tc.in)
		if (err != nil) != tc.err || (!tc.err && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParseConfig(t *testing.T) {
	got, err := ParseConfig(strings.NewReader("#\n# comment\nCONFIG_HZ=250\n# CONFIG_NO_HZ_FULL is not set\nCONFIG_LOCALVERSION=\"-x\"\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"HZ": "250", "NO_HZ_FULL": "n", "LOCALVERSION": "-x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v want %v", got, want)
	}
	if _, err := ParseConfig(strings.NewReader("CONFIG_HZ=250\nHZ 250\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line: err = %v, want one naming line 2", err)
	}
	if _, err := ParseConfig(strings.NewReader("\n")); err == nil {
		t.Error("empty configuration accepted")
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("CONFIG_HZ=250\n# CONFIG_NO_HZ_FULL is not set\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseConfig(bytes.NewReader(data))
		if err == nil && len(m) == 0 {
			t.Error("no error and no option")
		}
	})
}

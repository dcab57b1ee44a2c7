package capture

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tickemu/tickemu/framework/bundle"
)

// ConfigOptions are the kernel configuration options a bundle keeps: the
// ones that decide how the tick, the timers and CPU time accounting work.
var ConfigOptions = []string{
	"HZ", "HZ_PERIODIC", "NO_HZ_IDLE", "NO_HZ_FULL", "NO_HZ", "NO_HZ_COMMON",
	"HIGH_RES_TIMERS", "IRQ_TIME_ACCOUNTING", "VIRT_CPU_ACCOUNTING_GEN", "TICK_CPU_ACCOUNTING",
	"PREEMPT", "PREEMPT_NONE", "PREEMPT_VOLUNTARY", "PREEMPT_DYNAMIC", "PREEMPT_RT",
	"RCU_NOCB_CPU", "RCU_LAZY",
}

// UnknownHypervisor is Host.Hypervisor for a virtual machine whose
// hypervisor names itself nowhere tickemu looks.
const UnknownHypervisor = "unknown hypervisor"

// ReadHost reads the machine's and kernel's facts from the /proc, /sys, /boot
// and /dev files under root ("/" on the live system; a tree of copies in
// tests). cpuidVendor is the hypervisor vendor the CPU reports (CPUID leaf
// 0x40000000, "KVMKVMKVM"; "" when none or not x86), the last resort for
// naming a hypervisor. A fact whose file is missing is left empty and noted
// in the returned notes; a file that is there but unreadable as its kernel
// writes it is an error naming it.
func ReadHost(root, cpuidVendor string) (bundle.Host, []string, error) {
	r := hostReader{root: root}
	h := r.read(cpuidVendor)
	return h, r.notes, errors.Join(r.errs...)
}

type hostReader struct {
	root  string
	notes []string
	errs  []error
}

func (r *hostReader) path(p string) string { return filepath.Join(r.root, p) }

// text returns a file's contents without the trailing newline; "" and a
// note when the file is missing.
func (r *hostReader) text(p string, note bool) string {
	b, err := os.ReadFile(r.path(p))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if note {
				r.notes = append(r.notes, "no /"+p)
			}
		} else {
			r.errs = append(r.errs, err)
		}
		return ""
	}
	return strings.TrimRight(string(b), "\n")
}

func (r *hostReader) read(cpuidVendor string) bundle.Host {
	var h bundle.Host
	h.Release = r.text("proc/sys/kernel/osrelease", true)
	h.Version = r.text("proc/sys/kernel/version", true)
	h.Machine = r.text("proc/sys/kernel/arch", false)
	h.CmdLine = r.text("proc/cmdline", true)
	r.cpuinfo(&h, cpuidVendor)
	h.Online = r.text("sys/devices/system/cpu/online", true)
	if h.Online != "" {
		cpus, err := ParseCPUList(h.Online)
		if err != nil {
			r.errs = append(r.errs, fmt.Errorf("%s: %w", r.path("sys/devices/system/cpu/online"), err))
		}
		h.CPUs = len(cpus)
	}
	r.config(&h)
	h.NohzFull = r.text("sys/devices/system/cpu/nohz_full", false)
	if strings.TrimSpace(h.NohzFull) == "(null)" { // the file of a kernel built with NO_HZ_FULL, booted without nohz_full=
		h.NohzFull = ""
	}
	h.Isolated = r.text("sys/devices/system/cpu/isolated", false)
	if s := r.text("proc/sys/kernel/timer_migration", false); s != "" {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			r.errs = append(r.errs, fmt.Errorf("%s: %q is not a number", r.path("proc/sys/kernel/timer_migration"), s))
		} else {
			h.TimerMigration = &v
		}
	}
	h.Clocksource = r.text("sys/devices/system/clocksource/clocksource0/current_clocksource", true)
	r.clockevents(&h)
	r.cpuidle(&h)
	h.PMQoSLatencyUS = r.pmQoS()
	return h
}

// cpuinfo reads the CPU model and whether the machine is a virtual one (the
// "hypervisor" CPU flag the kernel sets from CPUID on x86).
func (r *hostReader) cpuinfo(h *bundle.Host, cpuidVendor string) {
	data := r.text("proc/cpuinfo", true)
	virtual := false
	for _, line := range strings.Split(data, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name", "cpu model", "Processor", "cpu": // x86; MIPS; old Arm; PowerPC
			if h.CPUModel == "" {
				h.CPUModel = v
			}
		case "flags":
			for _, f := range strings.Fields(v) {
				if f == "hypervisor" {
					virtual = true
				}
			}
		}
	}
	if !virtual {
		return
	}
	h.Hypervisor = r.hypervisorName(cpuidVendor)
}

// hypervisorName names the hypervisor of a virtual machine: Xen's
// /sys/hypervisor/type, the DMI system vendor, or the CPUID vendor.
func (r *hostReader) hypervisorName(cpuidVendor string) string {
	if t := strings.TrimSpace(r.text("sys/hypervisor/type", false)); t != "" {
		return t
	}
	vendor := strings.TrimSpace(r.text("sys/class/dmi/id/sys_vendor", false))
	for _, m := range []struct{ sub, name string }{
		{"QEMU", "KVM"}, {"KVM", "KVM"}, {"Xen", "Xen"}, {"Microsoft", "Hyper-V"},
		{"VMware", "VMware"}, {"innotek", "VirtualBox"}, {"Amazon EC2", "KVM"}, {"Google", "KVM"},
	} {
		if strings.Contains(vendor, m.sub) {
			return m.name
		}
	}
	switch strings.TrimRight(cpuidVendor, "\x00 ") {
	case "":
	case "KVMKVMKVM":
		return "KVM"
	case "Microsoft Hv":
		return "Hyper-V"
	case "VMwareVMware":
		return "VMware"
	case "XenVMMXenVMM":
		return "Xen"
	case "TCGTCGTCGTCG":
		return "QEMU TCG"
	case "ACRNACRNACRN":
		return "ACRN"
	case "bhyve bhyve":
		return "bhyve"
	case "VBoxVBoxVBox":
		return "VirtualBox"
	default:
		return strings.TrimRight(cpuidVendor, "\x00 ")
	}
	return UnknownHypervisor
}

// config reads the kernel configuration: /proc/config.gz (IKCONFIG_PROC),
// else /boot/config-RELEASE.
func (r *hostReader) config(h *bundle.Host) {
	var data []byte
	src := "/proc/config.gz"
	f, err := os.Open(r.path("proc/config.gz"))
	switch {
	case err == nil:
		defer f.Close()
		zr, zerr := gzip.NewReader(f)
		if zerr == nil {
			data, zerr = io.ReadAll(io.LimitReader(zr, 16<<20))
		}
		if zerr != nil {
			r.errs = append(r.errs, fmt.Errorf("%s: %w", r.path("proc/config.gz"), zerr))
			return
		}
	case errors.Is(err, fs.ErrNotExist):
		if h.Release == "" {
			r.notes = append(r.notes, "no kernel configuration: no /proc/config.gz and no release to find /boot/config-RELEASE")
			return
		}
		src = "/boot/config-" + h.Release
		data, err = os.ReadFile(r.path(src[1:]))
		if errors.Is(err, fs.ErrNotExist) {
			r.notes = append(r.notes, "no kernel configuration: no /proc/config.gz (CONFIG_IKCONFIG_PROC) and no "+src+": HZ and the NO_HZ mode are unknown")
			return
		}
		if err != nil {
			r.errs = append(r.errs, err)
			return
		}
	default:
		r.errs = append(r.errs, err)
		return
	}
	cfg, err := ParseConfig(bytes.NewReader(data))
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s: %w", r.path(src[1:]), err))
		return
	}
	h.ConfigSource = src
	h.Config = map[string]string{}
	for _, o := range ConfigOptions {
		v, ok := cfg[o]
		if !ok {
			v = "n"
		}
		h.Config[o] = v
	}
	if hz, err := strconv.Atoi(cfg["HZ"]); err == nil {
		h.HZ = hz
	} else {
		r.notes = append(r.notes, src+" has no CONFIG_HZ")
	}
	switch {
	case cfg["NO_HZ_FULL"] == "y":
		h.NoHZ = "full"
	case cfg["NO_HZ_IDLE"] == "y", cfg["NO_HZ"] == "y": // NO_HZ alone before 3.10
		h.NoHZ = "idle"
	default:
		h.NoHZ = "off"
	}
	h.HighRes = cfg["HIGH_RES_TIMERS"] == "y"
}

// ParseConfig reads a kernel .config: CONFIG_NAME=VALUE lines (quotes
// removed) and "# CONFIG_NAME is not set" (value "n"); the map's keys lack
// the CONFIG_ prefix.
func ParseConfig(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# CONFIG_"); ok {
			if name, ok := strings.CutSuffix(rest, " is not set"); ok {
				out[name] = "n"
			}
			continue
		}
		if line[0] == '#' {
			continue
		}
		rest, ok := strings.CutPrefix(line, "CONFIG_")
		k, v, ok2 := strings.Cut(rest, "=")
		if !ok || !ok2 || k == "" {
			return nil, fmt.Errorf("line %d: %q is not CONFIG_NAME=VALUE", n, line)
		}
		out[k] = strings.Trim(v, `"`)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no CONFIG_ line")
	}
	return out, nil
}

// clockevents reads each CPU's clockevent device (clockeventN is CPU N's,
// tick_init_sysfs()) and the broadcast device.
func (r *hostReader) clockevents(h *bundle.Host) {
	dir := r.path("sys/devices/system/clockevents")
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			r.notes = append(r.notes, "no /sys/devices/system/clockevents")
		} else {
			r.errs = append(r.errs, err)
		}
		return
	}
	type dev struct {
		cpu  int
		name string
	}
	var devs []dev
	for _, e := range ents {
		n, ok := strings.CutPrefix(e.Name(), "clockevent")
		if !ok {
			continue
		}
		cpu, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		devs = append(devs, dev{cpu, strings.TrimSpace(r.text("sys/devices/system/clockevents/"+e.Name()+"/current_device", false))})
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].cpu < devs[j].cpu })
	for _, d := range devs {
		h.Clockevents = append(h.Clockevents, d.name)
	}
	h.Broadcast = strings.TrimSpace(r.text("sys/devices/system/clockevents/broadcast/current_device", false))
}

// cpuidle reads the cpuidle driver, governor and CPU 0's states.
func (r *hostReader) cpuidle(h *bundle.Host) {
	base := "sys/devices/system/cpu/cpuidle/"
	h.CPUIdle.Driver = strings.TrimSpace(r.text(base+"current_driver", false))
	h.CPUIdle.Governor = strings.TrimSpace(r.text(base+"current_governor_ro", false))
	if h.CPUIdle.Governor == "" {
		h.CPUIdle.Governor = strings.TrimSpace(r.text(base+"current_governor", false))
	}
	if h.CPUIdle.Driver == "" {
		r.notes = append(r.notes, "no cpuidle driver (/sys/devices/system/cpu/cpuidle)")
	}
	first := "0"
	if h.Online != "" {
		if cpus, err := ParseCPUList(h.Online); err == nil && len(cpus) > 0 {
			first = strconv.Itoa(cpus[0])
		}
	}
	states := "sys/devices/system/cpu/cpu" + first + "/cpuidle/"
	for i := 0; ; i++ {
		d := states + "state" + strconv.Itoa(i) + "/"
		if _, err := os.Stat(r.path(d)); err != nil {
			break
		}
		s := bundle.IdleState{
			Name: strings.TrimSpace(r.text(d+"name", true)),
			Desc: strings.TrimSpace(r.text(d+"desc", false)),
		}
		s.LatencyUS = r.int(d + "latency")
		s.ResidencyUS = r.int(d + "residency")
		s.Disabled = r.int(d+"disable") != 0
		h.CPUIdle.States = append(h.CPUIdle.States, s)
	}
}

func (r *hostReader) int(p string) int64 {
	s := strings.TrimSpace(r.text(p, false))
	if s == "" {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s: %q is not a number", r.path(p), s))
	}
	return v
}

// pmQoS reads the CPU latency QoS limit from /dev/cpu_dma_latency: reading
// gives the aggregate limit as a native-endian 32-bit integer
// (cpu_latency_qos_read(), kernel/power/qos.c). Opening the file adds a
// request at the default value, which does not lower the limit. -1 when the
// file cannot be read.
func (r *hostReader) pmQoS() int64 {
	f, err := os.Open(r.path("dev/cpu_dma_latency"))
	if err != nil {
		r.notes = append(r.notes, fmt.Sprintf("PM QoS unknown: %v", err))
		return -1
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s: %w (want a 4-byte integer)", r.path("dev/cpu_dma_latency"), err))
		return -1
	}
	return int64(int32(binary.NativeEndian.Uint32(b[:])))
}

// ParseCPUList reads a kernel cpulist ("0-3,8,10-11"; "" is none).
func ParseCPUList(s string) ([]int, error) {
	var out []int
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, rng := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpulist %q: %q is not a CPU number", s, lo)
		}
		b := a
		if rng {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpulist %q: %q is not a range", s, part)
			}
		}
		if b-a > 1<<16 {
			return nil, fmt.Errorf("cpulist %q: range %q too large", s, part)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

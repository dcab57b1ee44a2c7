package traceimport

import (
	"strconv"
	"strings"
)

// decode fills e's kind-specific fields from f, whose keys are the ftrace
// names (the babeltrace reader renames LTTng's before calling it). Required
// fields are the ones every kernel version prints (include/trace/events/
// timer.h, irq.h, sched.h, power.h); the others are optional.
func decode(e *Event, f *fieldSet, in *interner) {
	e.WasArmed = -1
	e.TimerCPU = -1
	e.WakePrio, e.PrevPrio, e.NextPrio = -1, -1, -1
	switch e.Kind {
	case HRInit:
		e.Timer = f.ptr("hrtimer")
		e.Clock = f.optStr("clockid")
		e.Mode = f.optStr("mode")
	case HRStart:
		// TP_printk("hrtimer=%p function=%ps expires=%llu softexpires=%llu
		// mode=%s"): mode since 4.16, was_armed since f2e388a019e4 ("hrtimer: Reduce
		// trace noise in hrtimer_start()").
		e.Timer = f.ptr("hrtimer")
		e.Function = in.get(cleanFunction(f.str("function")))
		e.Expires = f.int("expires")
		e.SoftExpires = f.int("softexpires")
		e.Mode = f.optStr("mode")
		if v, ok := f.optInt("was_armed"); ok {
			e.WasArmed = 0
			if v != 0 {
				e.WasArmed = 1
			}
		}
	case HRCancel, HRExpireExit:
		e.Timer = f.ptr("hrtimer")
	case HRExpireEntry:
		e.Timer = f.ptr("hrtimer")
		e.Function = in.get(cleanFunction(f.str("function")))
		e.Now = f.int("now")
	case TimerInit, TimerCancel, TimerExpireExit:
		e.Timer = f.ptr("timer")
	case TimerStart:
		// "timer=%p function=%ps expires=%lu [timeout=%ld]" always;
		// cpu= idx= since the 4.8 wheel, flags= decoded since 4.11 (hex
		// before), bucket_expiry= added in the 5.x series.
		e.Timer = f.ptr("timer")
		e.Function = in.get(cleanFunction(f.str("function")))
		e.Expires = f.int("expires")
		if v, ok := f.optInt("timeout"); ok {
			e.Timeout, e.HasTimeout = v, true
		} else if now, ok := f.optInt("now"); ok { // LTTng: now = jiffies
			e.Timeout, e.HasTimeout = e.Expires-now, true
		}
		if v, ok := f.optInt("bucket_expiry"); ok {
			e.BucketExpiry = v
		}
		if v, ok := f.optInt("cpu"); ok {
			e.TimerCPU = int(v)
		}
		fl, traced := f.get("flags")
		e.Flags, e.FlagsTraced = timerFlags(fl), traced
	case TimerExpireEntry:
		// "timer=%p function=%ps now=%lu" (+ " baseclk=%lu" since 5.2).
		e.Timer = f.ptr("timer")
		e.Function = in.get(cleanFunction(f.str("function")))
		e.Now = f.int("now")
	case TickStop:
		// "success=%d dependency=%s"; older kernels printed "success=%s
		// msg=%s" with "yes"/"no".
		s := f.str("success")
		switch s {
		case "1", "yes":
			e.Success = 1
		case "0", "no":
			e.Success = 0
		default:
			f.fail("success", "want 0, 1, yes or no: "+quoteShort(s))
		}
		e.Dependency = f.optStr(f.firstOf("dependency", "msg"))
	case IRQEntry:
		e.IRQ = int(f.int("irq"))
		e.Name = f.optStr("name")
	case IRQExit:
		e.IRQ = int(f.int("irq"))
	case SoftirqRaise, SoftirqEntry, SoftirqExit:
		e.Vec = int(f.int("vec"))
	case LocalTimerEntry, LocalTimerExit:
	case SchedWakeup, SchedWaking, SchedWakeupNew:
		// "comm=%s pid=%d prio=%d target_cpu=%03d" (include/trace/events/
		// sched.h, the sched_wakeup_template class).
		e.WakeComm = f.str("comm")
		e.WakePID = int(f.int(f.firstOf("pid", "tid")))
		e.WakePrio = optPrio(f, "prio")
		if v, ok := f.optInt("target_cpu"); ok {
			e.TargetCPU = int(v)
		} else {
			e.TargetCPU = e.CPU
		}
	case SchedSwitch:
		e.PrevComm = f.str("prev_comm")
		e.PrevPID = int(f.int(f.firstOf("prev_pid", "prev_tid")))
		e.PrevState = f.optStr("prev_state")
		e.NextComm = f.str("next_comm")
		e.NextPID = int(f.int(f.firstOf("next_pid", "next_tid")))
		e.PrevPrio = optPrio(f, "prev_prio")
		e.NextPrio = optPrio(f, "next_prio")
	case SchedMigrateTask:
		// "comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d".
		e.WakeComm = f.str("comm")
		e.WakePID = int(f.int(f.firstOf("pid", "tid")))
		e.WakePrio = optPrio(f, "prio")
		e.OrigCPU = int(f.int("orig_cpu"))
		e.TargetCPU = int(f.int("dest_cpu"))
	case IPISendCPU:
		// "cpu=%u callsite=%pS callback=%pS" (include/trace/events/ipi.h, 6.6).
		e.TargetCPU = int(f.int("cpu"))
		e.Function = in.get(cleanFunction(f.optStr("callback")))
	case IPISendCPUMask:
		e.CPUMask = in.get(f.str("cpumask"))
		e.Function = in.get(cleanFunction(f.optStr("callback")))
	case IRQWorkEntry, IRQWorkExit, IPIEntry, IPIExit:
		e.Vec = int(f.int("vector"))
	case TimerBaseIdle:
		// "is_idle=%d cpu=%d" (6.9, kernel/time/timer.c's
		// timer_base_try_to_set_idle()).
		e.IsIdle = f.int("is_idle") != 0
		e.TimerCPU = int(f.int("cpu"))
	case PMQoSAddRequest, PMQoSUpdateRequest, PMQoSRemoveRequest:
		// "CPU_DMA_LATENCY value=%d" (the cpu_latency_qos_request class).
		e.QoSValue = f.int("value")
	case PMQoSUpdateTarget:
		// "action=%s prev_value=%d curr_value=%d".
		e.QoSAction = f.str("action")
		e.QoSPrev = f.int("prev_value")
		e.QoSValue = f.int("curr_value")
	case SignalGenerate:
		// "sig=%d errno=%d code=%d comm=%s pid=%d grp=%d res=%d"
		e.Sig = int(f.int("sig"))
		e.WakeComm = f.str("comm")
		e.WakePID = int(f.int("pid"))
		e.Result = int(f.int("res"))
	case SignalDeliver:
		// "sig=%d errno=%d code=%d sa_handler=%lx sa_flags=%lx"
		e.Sig = int(f.int("sig"))
	case WriteMSR:
		e.MSR = uint64(f.int("msr"))
		e.Value = uint64(f.int("value"))
	case SchedProcessFork:
		// "comm=%s pid=%d child_comm=%s child_pid=%d".
		e.WakeComm = f.str("comm")
		e.WakePID = int(f.int("pid"))
		e.ChildComm = f.str("child_comm")
		e.ChildPID = int(f.int("child_pid"))
	case SchedProcessExit:
		// "comm=%s pid=%d prio=%d", with " group_dead=%s" on recent kernels
		// (6.18 prints it).
		e.WakeComm = f.str("comm")
		e.WakePID = int(f.int("pid"))
		e.WakePrio = optPrio(f, "prio")
		e.GroupDead = f.optStr("group_dead") == "true"
	case CPUIdle:
		e.State = f.int("state")
		if v, ok := f.optInt("cpu_id"); ok && v >= 0 && v < 1<<20 {
			e.CPU = int(v)
		}
	}
}

// optPrio reads an optional kernel priority (0-139; the babeltrace reader
// has turned LTTng's into the kernel's); -1 when absent or out of range.
func optPrio(f *fieldSet, k string) int {
	if v, ok := f.optInt(k); ok && v >= 0 && v < 140 {
		return int(v)
	}
	return -1
}

// timerFlags normalises timer_start's flags: decoded text ("D|P") since
// 4.11, "0x%08x" before (TIMER_DEFERRABLE 0x00080000, TIMER_PINNED
// 0x00100000, TIMER_IRQSAFE 0x00200000 in 4.8-4.9, the layout of 5.x is
// shifted but those kernels print decoded text).
func timerFlags(s string) string {
	if !strings.HasPrefix(s, "0x") {
		return s
	}
	v, err := strconv.ParseUint(s[2:], 16, 64)
	if err != nil {
		return s
	}
	var out []string
	if v&0x00080000 != 0 {
		out = append(out, "D")
	}
	if v&0x00100000 != 0 {
		out = append(out, "P")
	}
	if v&0x00200000 != 0 {
		out = append(out, "I")
	}
	return strings.Join(out, "|")
}

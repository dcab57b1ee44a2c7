# USB NCM gadget: hrtimer_start(REL_SOFT) on every packet, double reprogramming.
#
# Report (M. Zenczykowski, Apr 2021): after 46eb1701c046 made
# softirq_expires_next always current, pktgen through the f_ncm gadget fell from
# 5.3-6 Gbps to 2.2 Gbps (~60%): the driver restarts its 300 us REL_SOFT
# tx timer for every packet, and each restart of the first-expiring timer
# reprogrammed the clockevent twice (once on removal, once on enqueue).
# 627ef5ae2df8 "hrtimer: Avoid double reprogramming in __hrtimer_start_range_ns()"
# keeps the timer local and reprograms once, or not at all if nothing changed.
#
# The device is an ARM SoC timer behind a slow interconnect: each register
# access costs 400 ns, so one set_next_event() (CTL read, counter read, CVAL
# write, CTL write) is ~1.6 us, the per-write cost the report's numbers imply
# (docs/reference/calibration.md §13: 3.2-3.5 us extra per packet).
#
# At HZ=250 the tick is the first timer during the last 300 us of each tick
# period; restarts then write nothing, so the average is a little under 2
# (double) and 1 (deferred) writes per packet.
#
#   tickemu run configs/ncm-restart.hcl --variant double --format bench
#   tickemu compare configs/ncm-restart.hcl --seeds 3
#   tickemu bisect configs/ncm-restart.hcl --good 5.10 --bad 5.12 --metric Gbps
#   tickemu bisect configs/ncm-restart.hcl --good 5.15 --bad 5.12 --metric Gbps   # the fix, 627ef5ae2df8

# Without a variant the kernel version decides both (null leaves them unset):
# deferred and updated by default.
variable "restart" {
  default     = null
  description = "double (5.10-5.14) or deferred (627ef5ae2df8); null: the kernel version's"
}

variable "softirq_next" {
  default     = null
  description = "stale (before 46eb1701c046) or updated; null: the kernel version's"
}

machine {
  cpus = 1
  hz   = 250
  nohz = "idle"
}

hrtimer {
  restart      = var.restart
  softirq_next = var.softirq_next
}

clockevent "local" {
  plugin      = "archtimer"
  freq        = "19.2MHz"
  sysreg_cost = "400ns"
}

workload "ncm" "usb0" {
  cpu         = 0
  packet_work = "2us"
  timeout     = "300us"
  packet_size = 1514
}

run {
  warmup   = "10ms"
  duration = "100ms"
  seed     = 1
}

# 5.10 before 46eb1701c046: the stale softirq_expires_next hides the restarted
# soft timer from hrtimer_reprogram(), so the device is almost never written
# (and the timer does not fire on time): the throughput before the regression.
variant "before_46eb" {
  vars = { restart = "double", softirq_next = "stale" }
}
# 46eb1701c046 .. 627ef5ae2df8: two writes per restart of the first timer.
variant "double" {
  vars = { restart = "double", softirq_next = "updated" }
}
# 627ef5ae2df8 and later: one write per restart.
variant "deferred" {
  vars = { restart = "deferred", softirq_next = "updated" }
}

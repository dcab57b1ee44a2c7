# a machine profile: defaults for the kernel block and the local clockevent
kernel {
  irq_entry_cost = "900ns"
  wakeup_cost    = "700ns"
}
clockevent "local" {
  plugin              = "lapic"
  deadline_write_cost = "12us"
}
clockevent "broadcast" {
  plugin = "hpet"
}

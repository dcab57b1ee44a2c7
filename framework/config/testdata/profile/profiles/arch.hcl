clockevent "local" {
  plugin              = "archtimer"
  sysreg_cost = "1us"
}

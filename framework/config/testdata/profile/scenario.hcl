machine {
  cpus    = 2
  profile = "profiles/kvm.hcl"
}
kernel {
  wakeup_cost = "500ns"
}
run { duration = "1s" }

kernel {
  irq_entry_cost = "900ns"
  irq_entri_cost = "1us"
}

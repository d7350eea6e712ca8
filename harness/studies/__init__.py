"""Studies over cases and runs: simulate, costs, the same-model verdict, compare, gate."""

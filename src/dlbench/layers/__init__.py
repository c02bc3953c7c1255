"""Each framework family's shared layer helpers and its optimizer mapping, used
by the workloads' implementations (dlbench/workloads/<model>/in_<family>.py)."""

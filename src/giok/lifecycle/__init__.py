"""What runs over time: boot context, nightly distillation, the context watchdog, routines and
cross-agent messaging."""

"""Each framework family's shared layer helpers and its optimizer mapping, used
by the workloads' implementations (dlbench/workloads/<model>/in_<family>.py)."""

# Dropout in training, for the whole process. The equivalence check
# (dlbench.equivalence) turns it off before it builds a model, so that every
# framework takes the same deterministic steps; every family's dropout reads
# it (helpers at build or trace time, the adapters of Keras, torch and MXNet
# by setting their Dropout layers' rates to 0).
_DROPOUT = {"on": True}


def set_dropout(on):
    _DROPOUT["on"] = bool(on)


def dropout_on():
    return _DROPOUT["on"]

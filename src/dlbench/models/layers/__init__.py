"""Each framework family's shared layer helpers and its optimizer mapping, used
by the workloads' implementations (dlbench/models/workloads/<model>/in_<family>.py)."""

# Dropout in training, for the whole process. The equivalence check
# (dlbench.run.equivalence) turns it off before it builds a model, so that every
# framework takes the same deterministic steps; every family's dropout reads
# it (helpers at build or trace time, the adapters of Keras, torch and MXNet
# by setting their Dropout layers' rates to 0).
_DROPOUT = {"on": True}


# Theano's and PyTensor's max-pool gradient (MaxPoolGrad) goes to every
# element equal to the window's maximum; TensorFlow's, torch's, JAX's,
# MXNet's, Chainer's and CNTK's to one. Ties are common on the digits (each
# pixel repeated 3x3): measured, 5e-5 of the loss after one step. Recorded
# in settings.own_rules where a model pools on Theano or PyTensor.
MAX_POOL_TIES = (
    "max pooling's gradient goes to every tied maximum (Theano's MaxPoolGrad; Keras 3's "
    "backends: to one)"
)


# Dynamic loss scaling for float16, Keras' LossScaleOptimizer rule, in every
# family that scales by hand (tensorflow_layers.LossScale, jax_layers.loss_scaled).
LOSS_SCALE_INITIAL = 2.0**15
LOSS_SCALE_GROWTH_INTERVAL = 2000
LOSS_SCALING = "dynamic (Keras' LossScaleOptimizer rule: 2^15, x2 per 2000 finite steps)"


def set_dropout(on):
    _DROPOUT["on"] = bool(on)


def dropout_on():
    return _DROPOUT["on"]

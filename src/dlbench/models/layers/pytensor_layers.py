"""What the workloads in PyTensor share
(dlbench/models/workloads/<model>/in_pytensor.py), layer for layer as the Keras
definitions (in_keras.py): same layers, parameter counts and initial weight
distributions (Glorot-uniform weights, zero biases, as Keras' defaults),
written as a symbolic graph over shared variables. Images arrive
channels-last; the models take channels-first (the layout of PyTensor's
conv2d and pool_2d). Importable without pytensor until a model is built."""

import functools

import numpy

from dlbench.models.layers import MAX_POOL_TIES, dropout_on


class Layers(object):
    """Makes the layers of one network: each is a function of the symbolic
    input and ``training``; the weights it creates join ``params``."""

    def __init__(self, pytensor, seed):
        from pytensor.tensor.random.utils import RandomStream

        self.pytensor = pytensor
        self.pt = pytensor.tensor
        self.init = numpy.random.default_rng(seed)
        self.random = RandomStream(seed)  # dropout masks; advances on every call
        self.params = []
        self.own_rules = []  # where this network computes other than Keras 3 (the record says)

    def _weights(self, shape, fan_in, fan_out):
        limit = numpy.sqrt(6.0 / (fan_in + fan_out))  # Keras' glorot_uniform
        kernel = self.init.uniform(-limit, limit, shape).astype("float32")
        bias = numpy.zeros(shape[1] if len(shape) == 2 else shape[0], "float32")
        self.params += [self.pytensor.shared(kernel), self.pytensor.shared(bias)]
        return self.params[-2:]

    def dense(self, units_in, units, relu=False):
        kernel, bias = self._weights((units_in, units), units_in, units)
        return lambda x, training: self._activate(self.pt.dot(x, kernel) + bias, relu)

    def conv(self, channels_in, filters, size, relu=False):
        from pytensor.tensor.nnet import conv2d

        shape = (filters, channels_in, size, size)
        kernel, bias = self._weights(shape, channels_in * size * size, filters * size * size)

        def layer(x, training):  # cross-correlation, as Keras' Conv2D
            out = conv2d(x, kernel, filter_shape=shape, border_mode="valid", filter_flip=False)
            return self._activate(out + bias.dimshuffle("x", 0, "x", "x"), relu)

        return layer

    def _activate(self, x, relu):
        # switch, not maximum(x, 0): maximum's gradient is 1 at x = 0 (both
        # branches equal), every other framework's ReLU has 0 there, and a
        # zero bias on blank pixels puts many inputs at exactly 0 (found by
        # the equivalence check: the cnn departed at step 1 by 1e-4).
        return self.pt.switch(x > 0, x, 0) if relu else x

    def max_pool(self, x, training):
        from pytensor.tensor.signal.pool import pool_2d

        if MAX_POOL_TIES not in self.own_rules:
            self.own_rules.append(MAX_POOL_TIES)
        return pool_2d(x, ws=(2, 2), ignore_border=True, mode="max")  # Keras' "valid"

    @staticmethod
    def flatten(x, training):
        return x.flatten(2)

    def dropout(self, rate):
        def layer(x, training):
            if not (training and dropout_on()):
                return x
            keep = self.random.uniform(size=x.shape, dtype="float32") >= rate
            return x * keep / numpy.float32(1.0 - rate)  # inverted dropout, as Keras

        return layer


def channels_first_shape(spec):
    height, width, channels = spec["input_shape"]
    return channels, height, width


# The config's optimizer settings each update rule reads (Keras' names).
SETTINGS = {
    "rmsprop": {"rho": "rho", "epsilon": "epsilon", "momentum": "momentum", "centered": "centered"},
    "adadelta": {"rho": "rho", "epsilon": "epsilon"},
    "adam": {"beta_1": "beta_1", "beta_2": "beta_2", "epsilon": "epsilon"},
    "sgd": {"momentum": "momentum", "nesterov": "nesterov"},
}


def updates(pytensor, params, grads, settings, native):
    """Keras 3's update rules written out, one (shared, new value) pair per
    variable, plus the step counter that Keras 2's ``decay`` reads."""
    pt = pytensor.tensor
    name = settings["name"]
    arguments = native.optimizer_arguments(settings, SETTINGS[name])
    step = pytensor.shared(numpy.float32(0))
    lr = native.learning_rate(settings, step)
    found = [(step, step + 1)]
    for param, grad in zip(params, grads):
        slot = functools.partial(zeros_like, pytensor, param)  # an optimizer slot
        found += RULES[name](pt, param, grad, lr, step + 1, slot, **arguments)
    return [(variable, new.astype(variable.dtype)) for variable, new in found]


def zeros_like(pytensor, param):
    return pytensor.shared(numpy.zeros_like(param.get_value()))


def rmsprop(pt, param, grad, lr, t, slot, rho, epsilon, momentum=0.0, centered=False):
    velocity = slot()
    new_velocity = rho * velocity + (1 - rho) * pt.sqr(grad)
    found = [(velocity, new_velocity)]
    denominator = new_velocity + epsilon
    if centered:
        average = slot()
        new_average = rho * average + (1 - rho) * grad
        found.append((average, new_average))
        denominator = denominator - pt.sqr(new_average)
    increment = lr * grad / pt.sqrt(denominator)
    if momentum:
        moment = slot()
        increment = momentum * moment + increment
        found.append((moment, increment))
    return found + [(param, param - increment)]


def adadelta(pt, param, grad, lr, t, slot, rho, epsilon):
    accumulated, accumulated_delta = slot(), slot()
    new_accumulated = rho * accumulated + (1 - rho) * pt.sqr(grad)
    delta = -pt.sqrt(accumulated_delta + epsilon) * grad / pt.sqrt(new_accumulated + epsilon)
    return [
        (accumulated, new_accumulated),
        (accumulated_delta, rho * accumulated_delta + (1 - rho) * pt.sqr(delta)),
        (param, param + lr * delta),
    ]


def adam(pt, param, grad, lr, t, slot, beta_1, beta_2, epsilon):
    m, v = slot(), slot()
    alpha = lr * pt.sqrt(1 - beta_2**t) / (1 - beta_1**t)
    new_m = m + (grad - m) * (1 - beta_1)
    new_v = v + (pt.sqr(grad) - v) * (1 - beta_2)
    return [(m, new_m), (v, new_v), (param, param - alpha * new_m / (pt.sqrt(new_v) + epsilon))]


def sgd(pt, param, grad, lr, t, slot, momentum=0.0, nesterov=False):
    if not momentum:
        return [(param, param - lr * grad)]
    m = slot()
    new_m = momentum * m - lr * grad
    step = momentum * new_m - lr * grad if nesterov else new_m
    return [(m, new_m), (param, param + step)]


RULES = {"rmsprop": rmsprop, "adadelta": adadelta, "adam": adam, "sgd": sgd}

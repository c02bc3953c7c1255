"""PyTensor's profiler (ProfileStats) names its ops as Theano's does, its
successor's ops mostly Theano's own (``Dot22``, ``CorrMM{...}``,
``Elemwise{Composite{...}}``): Theano's patterns (``theano_ops``). Its own
names: the random variables drawing dropout's masks (``uniform_rv{...}``),
the softmax and its logarithm with their axis (``LogSoftmax{axis=1}``) and
the scalar ``Composite{...}`` of the shapes' broadcast checks. The
workloads' ReLU, ``switch(x > 0, x, 0)``, is elementwise
(``Elemwise{Switch}``, ``Elemwise{gt,no_inplace}``)."""

from dlbench.analysis.op_categories import (
    CONVOLUTION,
    DATA_MOVEMENT,
    ELEMENTWISE,
    MATMUL,
    NORMALISATION,
    POOLING,
    REDUCTION,
    theano_ops,
)

OPS = theano_ops.OPS

EXAMPLES = {
    "Dot22": MATMUL,
    "Dot22Scalar": MATMUL,
    "CorrMM{valid, (1, 1), (1, 1), 1 False}": CONVOLUTION,
    "CorrMM_gradWeights{valid, (1, 1), (1, 1), 1 False}": CONVOLUTION,
    "CorrMM_gradInputs{valid, (1, 1), (1, 1), 1 False}": CONVOLUTION,
    "Pool{ignore_border=True, mode='max', ndim=2}": POOLING,
    "MaxPoolGrad{ignore_border=True, mode='max', ndim=2}": POOLING,
    "LogSoftmax{axis=1}": NORMALISATION,
    "Softmax{axis=1}": NORMALISATION,
    "Sum{axis=[0, 2, 3], acc_dtype=float64}": REDUCTION,
    "Sum{acc_dtype=int64}": REDUCTION,
    "Argmax{axis=(1,)}": REDUCTION,
    "uniform_rv{0, (0, 0), floatX, True}": ELEMENTWISE,
    "Elemwise{Switch}[(0, 1)]": ELEMENTWISE,
    "Elemwise{gt,no_inplace}": ELEMENTWISE,
    "Elemwise{Composite{Switch(i0, (i1 * i2 * i3), i4)}}[(0, 3)]": ELEMENTWISE,
    "Elemwise{Composite{(i0 - (i1 / sqrt((i2 + i3 + i4))))}}[(0, 0)]": ELEMENTWISE,
    "Elemwise{Add}[(0, 0)]": ELEMENTWISE,
    "Composite{Abs(maximum(Switch(EQ(i0, 1), (-1), i0), Switch(EQ(i1, 1), (-1), i1)))}": (
        ELEMENTWISE
    ),
    "Elemwise{Cast{float32}}": DATA_MOVEMENT,
    "InplaceDimShuffle{1,0}": DATA_MOVEMENT,
    "AdvancedSubtensor": DATA_MOVEMENT,
    "AdvancedIncSubtensor{inplace=True,  set_instead_of_inc=False}": DATA_MOVEMENT,
    "ARange{dtype='int64'}": DATA_MOVEMENT,
    "Assert{msg=Could not broadcast dimensions}": DATA_MOVEMENT,
    "ScalarFromTensor": DATA_MOVEMENT,
    "Reshape{4}": DATA_MOVEMENT,
    "Subtensor{int64}": DATA_MOVEMENT,
}

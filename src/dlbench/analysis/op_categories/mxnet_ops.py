"""mx.profiler's op names (MXNet's operators as its engine ran them) to
categories, for Gluon (native-mxnet) and keras-mxnet's symbolic executors.

MXNet's engine runs the ops of a static graph (Gluon's hybridized
CachedOp, an inference executor) in bulk segments: one engine op, whose
name joins its operators' names with commas (``Pooling,Convolution,...``,
``[transpose,Flatten,dot,...]``), cut at the profiler's 127 characters. A
pattern matches a whole operator name alone or inside a segment, and the
order below decides a segment's category: a segment that holds a
convolution is a convolution, else one that holds a matrix product is a
matrix product, and so on; its other operators' time goes with it.

The optimizer's update is MXNet's fused update operators
(``rmsprop_update``, ``adam_update``, ...). MXNet 1.x's AdaDelta (and any
optimizer without a fused operator) updates with elementwise NDArray
operators (``sqrt``, ``_mul_scalar``, ``broadcast_add``, ...) that the
profiler does not tell from the model's: they count as elementwise.

The engine's own housekeeping (``WaitForVar``: a wait for an array's
value; ``DeleteVariable``, ``DeleteOperator``: freeing arrays and cached
ops; ``SetupExec``: an executor's set-up) is no op of the model: other.
"""

from dlbench.analysis.op_categories import (
    CONVOLUTION,
    DATA_MOVEMENT,
    ELEMENTWISE,
    MATMUL,
    NORMALISATION,
    OPTIMIZER,
    OTHER,
    POOLING,
    RECURRENT,
    REDUCTION,
)


def _operators(*names):
    """Any of ``names`` (regular expressions), or its gradient
    (``_backward_<name>``), as one whole operator name: the op's name, or
    one of a bulk segment's comma-separated names."""
    return r"(?:^|[\[,])(?:_backward_)?(?:{})(?:$|[\],])".format("|".join(names))


OPS = (
    (_operators(r"\w*_update(?:_phase[12])?"), OPTIMIZER),
    (_operators("RNN", r"_sg_\w*rnn\w*"), RECURRENT),
    (
        _operators(
            "Convolution", "Convolution_v1", "Deconvolution", r"_sg_(?:mkldnn|onednn)_conv\w*"
        ),
        CONVOLUTION,
    ),
    (
        _operators(
            "FullyConnected",
            "dot",
            "batch_dot",
            r"_linalg_gemm2?",
            r"_npi_(?:matmul|dot|tensordot|einsum)",
            r"_sg_(?:mkldnn|onednn)_fully_connected\w*",
        ),
        MATMUL,
    ),
    (_operators("Pooling", "Pooling_v1", r"_contrib_Adaptive\w*Pooling\w*"), POOLING),
    (
        _operators(
            "BatchNorm",
            "BatchNorm_v1",
            "_contrib_SyncBatchNorm",
            "LayerNorm",
            "InstanceNorm",
            "GroupNorm",
            "L2Normalization",
            "LRN",
            "softmax",
            "log_softmax",
            "SoftmaxActivation",
            "masked_softmax",
        ),
        NORMALISATION,
    ),
    (
        # a broadcast sum's gradient sums over the broadcast axes: the
        # gradient of a bias added by broadcast (keras-mxnet's layers)
        r"(?:^|[\[,])_backward_broadcast_(?:add|sub|plus|minus)(?:$|[\],])",
        REDUCTION,
    ),
    (
        _operators(
            "sum",
            "sum_axis",
            "mean",
            "prod",
            "nansum",
            "nanprod",
            "max",
            "min",
            "max_axis",
            "min_axis",
            "argmax",
            "argmin",
            "argmax_channel",
            "norm",
            "topk",
            "pick",
            "MakeLoss",
            "make_loss",
            "SoftmaxOutput",
            "softmax_cross_entropy",
            "LinearRegressionOutput",
            "LogisticRegressionOutput",
            "broadcast_equal",
            "_equal",
            "_equal_scalar",
        ),
        REDUCTION,
    ),
    (
        _operators(
            "transpose",
            "Reshape",
            "reshape",
            "reshape_like",
            "Flatten",
            "flatten",
            "expand_dims",
            "squeeze",
            "copy",
            "_copy",
            "_copyto",
            r"Copy(?:CPU|GPU)2(?:CPU|GPU)",
            "Cast",
            "cast",
            "amp_cast",
            "amp_multicast",
            r"Reorder\w*",
            "SetValueOp",
            r"_zeros\w*",
            r"_ones\w*",
            "_full",
            "zeros_like",
            "ones_like",
            "BlockGrad",
            "stop_gradient",
            "identity",
            "Concat",
            "concat",
            "stack",
            "SliceChannel",
            "split",
            "slice",
            "slice_axis",
            "slice_like",
            "_slice_assign",
            "_slice_assign_scalar",
            "_crop_assign",
            "take",
            "gather_nd",
            "scatter_nd",
            "Embedding",
            "one_hot",
            "tile",
            "repeat",
            "Pad",
            "pad",
            "SwapAxis",
            "swapaxes",
            r"broadcast_(?:to|like|axis|axes)",
        ),
        DATA_MOVEMENT,
    ),
    (
        _operators(
            "Activation",
            "LeakyReLU",
            "Dropout",
            "relu",
            "sigmoid",
            "hard_sigmoid",
            "tanh",
            "softsign",
            r"broadcast_\w+",
            r"elemwise_\w+",
            r"_\w+_scalar",
            "add_n",
            "ElementWiseSum",
            r"_?(?:plus|minus|mul|div|mod|power|maximum|minimum|hypot|grad_add)",
            "negative",
            "reciprocal",
            "abs",
            "sign",
            "square",
            "sqrt",
            "rsqrt",
            "cbrt",
            "exp",
            "expm1",
            "log",
            "log1p",
            "log2",
            "log10",
            "clip",
            "where",
            "erf",
            "gamma",
            "round",
            "floor",
            "ceil",
            r"_random_\w+",
            r"_sample_\w+",
        ),
        ELEMENTWISE,
    ),
)

EXAMPLES = {
    "FullyConnected": MATMUL,
    "_backward_FullyConnected": MATMUL,
    "dot": MATMUL,
    "_backward_dot": MATMUL,
    "FullyConnected,Activation,Dropout,FullyConnected,Activation,Dropout": MATMUL,
    "[transpose,Flatten,dot,broadcast_add,LeakyReLU,dot,broadcast_add,softmax]": MATMUL,
    "Convolution": CONVOLUTION,
    "_backward_Convolution": CONVOLUTION,
    "Pooling,Convolution,Pooling,Flatten,FullyConnected,Activation": CONVOLUTION,
    "Activation,Convolution,Activation,Pooling,Dropout,Flatten,FullyConnected,Activation,Dropout": (
        CONVOLUTION
    ),
    "[transpose,transpose,Convolution,transpose,broadcast_add,transpose,Pooling,transpose,"
    "transpose,transpose,Convolution,transpose,": CONVOLUTION,
    "Pooling": POOLING,
    "softmax": NORMALISATION,
    "log_softmax": NORMALISATION,
    "_backward_log_softmax": NORMALISATION,
    "rmsprop_update": OPTIMIZER,
    "mean": REDUCTION,
    "argmax": REDUCTION,
    "pick": REDUCTION,
    "_backward_MakeLoss": REDUCTION,
    "broadcast_equal": REDUCTION,
    "_backward_broadcast_add": REDUCTION,
    "transpose": DATA_MOVEMENT,
    "Flatten": DATA_MOVEMENT,
    "_backward_copy": DATA_MOVEMENT,
    "CopyCPU2CPU": DATA_MOVEMENT,
    "Reorder": DATA_MOVEMENT,
    "SetValueOp": DATA_MOVEMENT,
    "_zeros_without_dtype": DATA_MOVEMENT,
    "BlockGrad": DATA_MOVEMENT,
    "LeakyReLU": ELEMENTWISE,
    "Dropout": ELEMENTWISE,
    "broadcast_add": ELEMENTWISE,
    "_backward_broadcast_div": ELEMENTWISE,
    "_mul_scalar": ELEMENTWISE,
    "sqrt": ELEMENTWISE,
    "add_n": ELEMENTWISE,
    "_backward_mul": ELEMENTWISE,
    "WaitForVar": OTHER,
    "DeleteVariable": OTHER,
}

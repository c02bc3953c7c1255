"""tf.profiler's op names to categories (dlbench.run.op_profilers.in_tensorflow).

A graph op or an eager op is named by its TensorFlow op type, with
oneDNN's rewrites of it (``_MklNativeFusedConv2D``, ``_MklMatMul``); an op
that XLA compiled (``jit_compile``) by its HLO name and, where XLA's
metadata names it, the TensorFlow op type it came from
(``multiply_subtract_fusion:AssignSubVariableOp``), which decides; an HLO op
without one by what its HLO name says it does (``copy``,
``wrapped_reduce-window``, ``or_convert_fusion``). A GPU's kernels keep
their kernel names. The optimizer's update: Keras' ops inside its name scope
(marked by the profiler), the native optimizer's fused kernels
(``ResourceApplyRMSProp``) and the variables' in-place updates. A GRU on
the CPU has no fused kernel here: its steps' matrix products and
activations are theirs, only the loop's own time (``While``) is recurrent.
Building the input pipeline (Keras builds one per ``fit``: ``MakeIterator``,
``...Dataset``) is no category's and stays listed by name.
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

# An op type, alone or after an HLO name's colon, and oneDNN's prefixes of
# the kernels it rewrites the graph's ops to.
TYPE = r"(^|:)(_Mkl(Native)?|_)?"
# An HLO name that XLA did not tie to a TensorFlow op type.
HLO = r"^(wrapped_)?"

OPS = (
    (TYPE + r"(Resource(Sparse)?Apply\w+|(Sparse)?Apply\w+)$", OPTIMIZER),
    (TYPE + r"(AssignSubVariableOp|AssignAddVariableOp)$", OPTIMIZER),
    (TYPE + r"(CudnnRNN\w*|GRUBlockCell\w*|LSTMBlockCell\w*|BlockLSTM\w*)$", RECURRENT),
    (TYPE + r"(While|StatelessWhile)$", RECURRENT),
    (TYPE + r"(PadWith)?(Fused)?(Conv[23]D\w*|DepthwiseConv2dNative\w*)$", CONVOLUTION),
    (TYPE + r"(MaxPool|AvgPool)\w*$", POOLING),
    (
        TYPE + r"(FusedBatchNorm\w*|FusedInstanceNorm\w*|LayerNorm\w*|Softmax|LogSoftmax)$",
        NORMALISATION,
    ),
    (TYPE + r"(Fused)?(MatMul|BatchMatMul(V2|V3)?|Einsum)$", MATMUL),
    (
        TYPE + r"(Sum|Mean|Max|Min|Prod|All|Any|ArgMax|ArgMin|BiasAddGrad|L2Loss|"
        r"(Sparse)?SoftmaxCrossEntropyWithLogits)$",
        REDUCTION,
    ),
    (
        TYPE + r"(ReadVariableOp|AssignVariableOp|VarHandleOp|Identity\w*|Cast|Reshape|Transpose|"
        r"ConjugateTranspose|Concat(V2)?|Pack|Unpack|StridedSlice\w*|Slice|Split\w*|"
        r"(Resource)?Gather\w*|ScatterNd\w*|TensorScatter\w*|Unsorted\w*|Squeeze|ExpandDims|"
        r"Fill|ZerosLike|OnesLike|Const|EagerConst|Shape\w*|Size|Rank|Tile|Pad\w*|MirrorPad|"
        r"Bitcast|ToTf|InputConversion|Send|Recv|HostSend|HostRecv|Range|OneHot|Reverse\w*|"
        r"IteratorGetNext\w*|Optional\w+|\w*TensorList\w*|Placeholder\w*)$",
        DATA_MOVEMENT,
    ),
    (
        TYPE + r"(Add|AddV2|AddN|Sub|Mul|MulNoNan|RealDiv|Div|DivNoNan|FloorDiv|FloorMod|Mod|"
        r"Neg|Abs|Sign|Square|SquaredDifference|Sqrt|Rsqrt|Reciprocal|Pow|Exp|Expm1|Log|Log1p|"
        r"Maximum|Minimum|ClipByValue|Floor|Ceil|Round|Erf|IsFinite|BiasAdd|Relu|Relu6|Elu|"
        r"Selu|LeakyRelu|Gelu|Softplus|Softsign|Sigmoid|Tanh|\w+Grad|Select|SelectV2|"
        r"Greater|GreaterEqual|Less|LessEqual|Equal|NotEqual|Logical(And|Or|Not)|"
        r"Bitwise(And|Or|Xor)|LeftShift|RightShift|Stateless\w*Random\w*|Random\w*|"
        r"StatelessRandomGetKeyCounter\w*|RngReadAndSkip|RngBitGenerator)$",
        ELEMENTWISE,
    ),
    # XLA's HLO ops without a TensorFlow op type, by their HLO names
    (r"^[a-z][^:]*convolution[^:]*$", CONVOLUTION),
    (r"^(?:[a-z][^:]*[_-])?dot(?:[_-][^:]*)?$", MATMUL),
    (r"^[a-z][^:]*reduce[^:]*$", REDUCTION),
    (
        HLO + r"(copy|convert|transpose|concatenate|slice|dynamic-slice|dynamic-update-slice|"
        r"gather|scatter|pad|bitcast|broadcast|reshape|tuple|get-tuple-element)(_fusion)?$",
        DATA_MOVEMENT,
    ),
    (r"^(wrapped_[\w-]+|[a-z][\w-]*_fusion|rng[\w-]*)$", ELEMENTWISE),
    # a GPU's kernels (CUPTI's names)
    (r"(?i)(convolve|convolution|conv2d|conv3d|winograd|implicit_gemm|dgrad|wgrad)", CONVOLUTION),
    (r"(?i)(gemm|gemv|cublas|cutlass|matmul)", MATMUL),
    (r"(?i)(memcpy|memset)", DATA_MOVEMENT),
)

EXAMPLES = {
    "_MklMatMul": MATMUL,
    "_MklNativeFusedMatMul": MATMUL,
    "MatMul:MatMul": MATMUL,
    "MatMul_1:MatMul": MATMUL,
    "dot:Einsum": MATMUL,
    "_MklNativeFusedConv2D": CONVOLUTION,
    "_MklNativePadWithFusedConv2D": CONVOLUTION,
    "_MklNativeConv2DBackpropFilterWithBias": CONVOLUTION,
    "_MklNativeConv2DBackpropInput": CONVOLUTION,
    "while:While": RECURRENT,
    "_MklNativeMaxPool": POOLING,
    "_MklNativeMaxPoolGrad": POOLING,
    "_MklSoftmax": NORMALISATION,
    "subtract_exponential_fusion:Softmax": NORMALISATION,
    "SoftmaxCrossEntropyWithLogits": REDUCTION,
    "iota_reduce_fusion:ArgMax": REDUCTION,
    "wrapped_reduce-window:BiasAddGrad": REDUCTION,
    "wrapped_reduce-window": REDUCTION,
    "Mean": REDUCTION,
    "ReluGrad": ELEMENTWISE,
    "AddN": ELEMENTWISE,
    "StatelessRandomUniformV2": ELEMENTWISE,
    "add_divide_fusion:Sigmoid": ELEMENTWISE,
    "multiply_select_fusion:ReluGrad": ELEMENTWISE,
    "concatenate_bitcast_fusion": ELEMENTWISE,
    "rng-get-and-update-state": ELEMENTWISE,
    "ResourceApplyAdadelta": OPTIMIZER,
    "multiply_add_fusion:ResourceApplyRMSProp": OPTIMIZER,
    "multiply_subtract_fusion:AssignSubVariableOp": OPTIMIZER,
    "wrapped_add:AssignAddVariableOp": OPTIMIZER,
    "ReadVariableOp": DATA_MOVEMENT,
    "_EagerConst": DATA_MOVEMENT,
    "IteratorGetNext": DATA_MOVEMENT,
    "bitcast_dynamic-update-slice_fusion:TensorListPushBack": DATA_MOVEMENT,
    "copy": DATA_MOVEMENT,
    "wrapped_convert": DATA_MOVEMENT,
    "MakeIterator": OTHER,
    "ParallelMapDatasetV2": OTHER,
}

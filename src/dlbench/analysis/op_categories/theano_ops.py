"""Theano's profiler (ProfileStats) names each op of a compiled function as
the op prints itself: its class with its parameters (``Dot22``,
``CorrMM{valid, (1, 1), (1, 1), 1 False}``, ``Sum{axis=[0],
acc_dtype=float64}``) and, for the fused arithmetic, the scalar program it
runs (``Elemwise{Composite{(i0 - (i1 / (i2 + sqrt(clip(i3, i4, i5)))))}}``).
PyTensor, Theano's successor, prints its ops the same way
(``pytensor_ops`` takes these patterns). Patterns are anchored at the
name's start: a fused program's text names scalar functions (``maximum``,
``Switch``) that are no op of their own. The optimizer's update is told
apart by the graph, not by name (its nodes come with the optimizer's
scope). Keras 2's recurrent layers run as one ``Scan`` op over the time
steps (``forall_inplace,cpu,scan_fn}``, its gradient ``...grad_of_scan_fn}``),
whose time holds its inner graph's ops."""

from dlbench.analysis.op_categories import (
    CONVOLUTION,
    DATA_MOVEMENT,
    ELEMENTWISE,
    MATMUL,
    NORMALISATION,
    POOLING,
    RECURRENT,
    REDUCTION,
)

OPS = (
    (r"^(Crossentropy|CrossentropySoftmax|CrossentropyCategorical)", REDUCTION),
    (r"^(for|forall_inplace)[{,]|^Scan", RECURRENT),
    (r"^(Corr(3d)?MM|AbstractConv|ConvOp|Conv3D|ConvGrad3D|ConvTransp3D|Gpu.*Conv)", CONVOLUTION),
    (r"^(Pool|MaxPoolGrad|AveragePoolGrad|DownsampleFactorMax|MaxPoolRop)(\{|$)", POOLING),
    (r"^(Log)?Softmax|^(Abstract)?BatchNorm", NORMALISATION),
    (r"^(C|Scipy)?(Dot\d*|Gemm|Gemv|Ger|BatchedDot)(Scalar)?(\{|$)|^dot$", MATMUL),
    (
        r"^(Sum|Prod|ProdWithoutZeros|Argmax|Argmin|MaxAndArgmax|Max|Min|Mean|All|Any|CAReduce)"
        r"(\{|$)",
        REDUCTION,
    ),
    (
        r"^(Inplace)?DimShuffle|^(Reshape|Shape|Shape_i|MakeVector|Subtensor|IncSubtensor|"
        r"AdvancedSubtensor1?|AdvancedIncSubtensor1?|Alloc|AllocEmpty|Join|Split|Flatten|"
        r"Rebroadcast|SpecifyShape|ScalarFromTensor|TensorFromScalar|Assert|DeepCopyOp|"
        r"OutputGuard|ViewOp|ARange|Unbroadcast)(\{|$)|^Elemwise\{Cast\{\w+\}\}|^if\{",
        DATA_MOVEMENT,
    ),
    (r"^Elemwise\{|^Composite\{|^mrg_uniform\{|^\w+_rv\{", ELEMENTWISE),
)

EXAMPLES = {
    "Dot22": MATMUL,
    "Dot22Scalar": MATMUL,
    "CorrMM{valid, (1, 1), (1, 1), 1 False}": CONVOLUTION,
    "CorrMM_gradWeights{valid, (1, 1), (1, 1), 1 False}": CONVOLUTION,
    "CorrMM_gradInputs{valid, (1, 1), (1, 1), 1 False}": CONVOLUTION,
    "Pool{ignore_border=True, mode='max', ndim=2}": POOLING,
    "MaxPoolGrad{ignore_border=True, mode='max', ndim=2}": POOLING,
    "SoftmaxWithBias": NORMALISATION,
    "SoftmaxGrad": NORMALISATION,
    "Sum{axis=[0], acc_dtype=float64}": REDUCTION,
    "Sum{axis=[0, 1, 2], acc_dtype=float64}": REDUCTION,
    "Argmax{axis=(1,)}": REDUCTION,
    "Prod{axis=None, dtype='int64', acc_dtype='int64'}": REDUCTION,
    "mrg_uniform{TensorType(float32, matrix),inplace}": ELEMENTWISE,
    "Elemwise{Composite{(i0 * (i1 + Abs(i1)))}}": ELEMENTWISE,
    "Elemwise{Composite{(i0 - (i1 / (i2 + sqrt(clip(i3, i4, i5)))))}}[(0, 0)]": ELEMENTWISE,
    "Elemwise{Composite{Cast{float32}(LT(i0, i1))}}[(0, 0)]": ELEMENTWISE,
    "Elemwise{Add}[(0, 0)]": ELEMENTWISE,
    "Elemwise{mul,no_inplace}": ELEMENTWISE,
    "Elemwise{Cast{float32}}": DATA_MOVEMENT,
    "if{inplace}": DATA_MOVEMENT,
    "InplaceDimShuffle{0,3,1,2}": DATA_MOVEMENT,
    "InplaceDimShuffle{x,0}": DATA_MOVEMENT,
    "Subtensor{::, ::, ::int64, ::int64}": DATA_MOVEMENT,
    "Reshape{2}": DATA_MOVEMENT,
    "Alloc": DATA_MOVEMENT,
    "Shape_i{0}": DATA_MOVEMENT,
    "MakeVector{dtype='int64'}": DATA_MOVEMENT,
    "forall_inplace,cpu,scan_fn}": RECURRENT,
    "forall_inplace,cpu,grad_of_scan_fn}": RECURRENT,
}

"""CNTK's profiler names (node timing: a computation node's primitive op
with its pass, ``TimesForward``, ``ReLUBackward``; the Trainer's phases) to
categories. The learner's whole update is one phase, ``__Weight Update``;
Keras 2's optimizers run their update as a graph of their own inside it,
whose nodes the profiler marks as the optimizer's. The phases that hold the
nodes keep what no node explains, the engine's time between nodes (``__Forward
+ Backward``) and the feeding of the batch (``_Minibatch Iteration``): other
ops. A recurrence built from CNTK's ops (cntk.layers.Recurrence, Keras 2's
unrolled GRU) shows as those ops; PastValue and FutureValue, the delay that
carries the state from one step to the next, are data movement. CNTK's fused
recurrent kernel is OptimizedRNNStack (cuDNN, GPU only)."""

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

PASS = r"(Forward|Backward)$"
OPS = (
    (r"^__Weight Update$", OPTIMIZER),
    (r"^OptimizedRNNStack" + PASS, RECURRENT),
    (r"^Convolution" + PASS, CONVOLUTION),
    (r"^(Pooling|Unpooling|ROIPooling)" + PASS, POOLING),
    (r"^(BatchNormalization|Softmax|LogSoftmax)" + PASS, NORMALISATION),
    (r"^(Times|TransposeTimes)" + PASS, MATMUL),
    (
        r"^(ReduceElements|SumAll|Hardmax|TopK|CrossEntropyWithSoftmax|ClassificationError|"
        r"SquaredError|Equal|EditDistanceError|LambdaRank|NDCG|CosDistance|"
        r"CosDistanceWithNegativeSamples|ForwardBackward)" + PASS,
        REDUCTION,
    ),
    (
        r"^(Reshape|TransposeAxes|Slice|Splice|Gather|GatherPacked|ScatterPacked|PackedIndex|"
        r"Where|ReconcileDynamicAxis|PastValue|FutureValue|Pad|Crop|Squeeze|Cast|Assign|"
        r"ConstantOp|OneHot|ToSequence|ToSequenceLike|UnpackSequence|ToBatch|UnpackBatch|"
        r"Pass|NoOp|StopGradient|Combine|Input|Parameter|Constant|EyeLikeOp)" + PASS,
        DATA_MOVEMENT,
    ),
    (
        r"^(Plus|Minus|ElementTimes|Negate|ReLU|Sigmoid|StableSigmoid|Tanh|Exp|Log|LogPlus|"
        r"Sqrt|Abs|Floor|Reciprocal|Dropout|Clip|Select|Pow|ELU|SELU|LeakyReLU|PReLU|Softplus|"
        r"Softsign|Sin|Cos|Tan|Asin|Acos|Atan|Sinh|Cosh|Asinh|Atanh|NotEqual|Less|LessEqual|"
        r"Greater|GreaterEqual|StraightThrough|RandomSample|RandomDistribution)" + PASS,
        ELEMENTWISE,
    ),
)

EXAMPLES = {
    "TimesForward": MATMUL,
    "TimesBackward": MATMUL,
    "TransposeTimesForward": MATMUL,
    "ConvolutionForward": CONVOLUTION,
    "ConvolutionBackward": CONVOLUTION,
    "PoolingForward": POOLING,
    "PoolingBackward": POOLING,
    "SoftmaxForward": NORMALISATION,
    "SoftmaxBackward": NORMALISATION,
    "ReduceElementsForward": REDUCTION,
    "ReduceElementsBackward": REDUCTION,
    "HardmaxForward": REDUCTION,
    "EqualForward": REDUCTION,
    "SliceForward": DATA_MOVEMENT,
    "SliceBackward": DATA_MOVEMENT,
    "TransposeAxesForward": DATA_MOVEMENT,
    "ReshapeForward": DATA_MOVEMENT,
    "PastValueForward": DATA_MOVEMENT,
    "GatherPackedBackward": DATA_MOVEMENT,
    "ReconcileDynamicAxisForward": DATA_MOVEMENT,
    "ParameterBackward": DATA_MOVEMENT,
    "ConstantOpForward": DATA_MOVEMENT,
    "CastForward": DATA_MOVEMENT,
    "PlusForward": ELEMENTWISE,
    "PlusBackward": ELEMENTWISE,
    "ElementTimesBackward": ELEMENTWISE,
    "ReLUForward": ELEMENTWISE,
    "ReLUBackward": ELEMENTWISE,
    "DropoutForward": ELEMENTWISE,
    "StableSigmoidForward": ELEMENTWISE,
    "TanhBackward": ELEMENTWISE,
    "SqrtForward": ELEMENTWISE,
    "ClipBackward": ELEMENTWISE,
    "SelectForward": ELEMENTWISE,
    "__Weight Update": OPTIMIZER,
    "__Forward + Backward": OTHER,
    "_Minibatch Iteration": OTHER,
}

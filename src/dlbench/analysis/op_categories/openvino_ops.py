"""OpenVINO's performance counters name each executed node of the compiled
graph by its type (the CPU plugin's nodes) to categories. The plugin fuses as
it compiles: an activation or a bias usually runs inside the convolution or
the fully connected node before it, a chain of elementwise ops inside one
``Subgraph``. Keras' OpenVINO backend computes its convolutions in NCHW
around its NHWC tensors: the ``Transpose`` nodes around them, and the
plugin's ``Reorder`` (layout and precision conversions), are data movement.
An inference-time batch normalisation that Keras writes as arithmetic runs as
``Multiply`` and ``Add``; a global average pooling and a layer
normalisation's mean both run as ``ReduceMean`` (a reduction by its name)."""

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
    (r"^(GRU|LSTM|RNN|AUGRU)(Sequence|Cell)$|^TensorIterator$|^Loop$", RECURRENT),
    (
        r"^(Convolution|GroupConvolution|Deconvolution|BinaryConvolution|DeformableConvolution)$",
        CONVOLUTION,
    ),
    (r"^(MaxPool|AvgPool|AdaptivePooling|AdaptiveMaxPool|AdaptiveAvgPool|ROIPooling)$", POOLING),
    (r"^(MVN|NormalizeL2|BatchNormInference|Softmax|LogSoftmax|LRN|RMS)$", NORMALISATION),
    (r"^(FullyConnected|MatMul|Einsum|ScaledDotProductAttention|MHA|GatedMLP)", MATMUL),
    (r"^(Reduce[A-Za-z0-9]+|TopK|ArgMax|ArgMin|CTCLoss)$", REDUCTION),
    (
        r"^(Reorder|Transpose|Reshape|Squeeze|Unsqueeze|Concat|Split|VariadicSplit|Gather|"
        r"GatherND|GatherElements|ScatterUpdate|ScatterNDUpdate|ScatterElementsUpdate|"
        r"StridedSlice|Slice|Pad|Broadcast|Tile|ShapeOf|Convert|Input|Parameter|Output|Result|"
        r"Const|Constant|DepthToSpace|SpaceToDepth|ShuffleChannels|Interpolate|Range|"
        r"OneHot|Eye|Roll|Reverse|ReverseSequence|NonZero|Select|MemoryInput|MemoryOutput)$",
        DATA_MOVEMENT,
    ),
    (
        r"^(Subgraph|Eltwise|Add|Subtract|Multiply|Divide|Power|PowerStatic|SquaredDifference|"
        r"Maximum|Minimum|Mod|FloorMod|Relu|PRelu|Elu|Gelu|Swish|Mish|HSwish|HSigmoid|"
        r"SoftPlus|SoftSign|Sigmoid|Tanh|Exp|Log|Sqrt|Abs|Negative|Clamp|Floor|Ceiling|Round|"
        r"Erf|Sin|Cos|Tan|Equal|NotEqual|Less|LessEqual|Greater|GreaterEqual|LogicalAnd|"
        r"LogicalOr|LogicalNot|LogicalXor|FakeQuantize|MulAdd|Bias|ScaleShift|Math)$",
        ELEMENTWISE,
    ),
)

EXAMPLES = {
    "FullyConnected": MATMUL,
    "Convolution": CONVOLUTION,
    "GRUSequence": RECURRENT,
    "LSTMSequence": RECURRENT,
    "MaxPool": POOLING,
    "Softmax": NORMALISATION,
    "ReduceMean": REDUCTION,
    "Transpose": DATA_MOVEMENT,
    "Reorder": DATA_MOVEMENT,
    "Reshape": DATA_MOVEMENT,
    "Pad": DATA_MOVEMENT,
    "Gather": DATA_MOVEMENT,
    "Concat": DATA_MOVEMENT,
    "Broadcast": DATA_MOVEMENT,
    "ShapeOf": DATA_MOVEMENT,
    "Squeeze": DATA_MOVEMENT,
    "Unsqueeze": DATA_MOVEMENT,
    "Add": ELEMENTWISE,
    "Multiply": ELEMENTWISE,
    "PowerStatic": ELEMENTWISE,
}

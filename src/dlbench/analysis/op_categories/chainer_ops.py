"""chainer.function_hooks.TimerHook's names (Chainer's FunctionNodes, by
class name) to categories. A FunctionNode's forward and its backward share
its name; a backward that applies other FunctionNodes gives its work to
theirs (``LinearGradData``, ``LinearGradWeight``, ``Convolution2DGradW``,
``Deconvolution2DFunction``: a convolution's gradient with respect to its
input).

Chainer's optimizer update (``optimizer.update`` -> each parameter's
``UpdateRule``) is no FunctionNode: the hook never sees it, and its time is
unexplained; this table has no optimizer op.
"""

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
    (r"^(NStep(Bi)?(LSTM|GRU|RNN)|LSTM|GRU|SLSTM|TreeLSTM|ZoneoutLSTM)", RECURRENT),
    (r"^(Dilated|Depthwise)?(Convolution|Deconvolution)(2D|ND)", CONVOLUTION),
    (r"^(Linear(Function|GradData|GradWeight)|MatMul|BatchMatMul|Bilinear|Tensordot)", MATMUL),
    (r"^(Max|Average)Pooling(2D|ND)|^(Un|Up)(pooling|sampling)|^ROI", POOLING),
    (
        r"^(Fixed)?BatchNormalization|^_BatchNormalization|^(BatchRenormalization|"
        r"LayerNormalization|GroupNormalization|NormalizeL2|LocalResponseNormalization)|"
        r"^(Log)?Softmax($|Grad)",
        NORMALISATION,
    ),
    (
        r"^(Sum|Mean|Max|Min|Argmax|Argmin|Prod|LogSumExp|Accuracy|"
        r"_?SoftmaxCrossEntropy|SigmoidCrossEntropy|MeanSquaredError|MeanAbsoluteError|"
        r"SquaredError|AbsoluteError|BlackOut|NegativeSampling|CrossCovariance|Huber)",
        REDUCTION,
    ),
    (
        r"^(Copy|Reshape|Transpose|Swapaxes|Rollaxis|Cast|Concat|SplitAxis|GetItem|"
        r"GetItemGrad|BroadcastTo|Broadcast|ExpandDims|Squeeze|Stack|Pad|Tile|Repeat|"
        r"Flip|Identity|EmbedIDFunction|EmbedIDGrad|SelectItem|Permutate|Space2Depth|"
        r"Depth2Space|ResizeImages|ScatterAdd)",
        DATA_MOVEMENT,
    ),
    (
        r"^(ReLU|ClippedReLU|LeakyReLU|ELU|SELU|Sigmoid|HardSigmoid|Tanh|Softplus|Swish|"
        r"Maxout|Dropout|Add|AddConstant|Sub|SubFromConstant|Mul|MulConstant|Div|"
        r"DivFromConstant|Pow|Sqrt|Rsqrt|Square|Exp|Log|Absolute|Neg|Clip|Maximum|Minimum|"
        r"Where|Sign|Erf|Fix|Floor|Ceil|Cos|Sin|Linear.*Interpolate|Scale|Bias)",
        ELEMENTWISE,
    ),
)

EXAMPLES = {
    "LinearFunction": MATMUL,
    "LinearGradData": MATMUL,
    "LinearGradWeight": MATMUL,
    "Convolution2DFunction": CONVOLUTION,
    "Convolution2DGradW": CONVOLUTION,
    "Deconvolution2DFunction": CONVOLUTION,
    "MaxPoolingND": POOLING,
    "MaxPoolingNDGrad": POOLING,
    "Softmax": NORMALISATION,
    "SoftmaxCrossEntropy": REDUCTION,
    "_SoftmaxCrossEntropyGrad_NoDoubleBackprop": REDUCTION,
    "Sum": REDUCTION,
    "Copy": DATA_MOVEMENT,
    "Reshape": DATA_MOVEMENT,
    "ReLU": ELEMENTWISE,
    "ReLUGrad2": ELEMENTWISE,
    "Dropout": ELEMENTWISE,
    "DropoutGrad": ELEMENTWISE,
}

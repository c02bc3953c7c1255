"""torch.profiler's op names (aten ops, autograd nodes) to categories.
Keras 3's optimizers on torch update the weights with ``torch._foreach_*``;
torch.optim's own step is its range (``Optimizer.step#...``), whose ops the
profiler marks as the optimizer's."""

from dlbench.analysis.op_categories import (
    CONVOLUTION,
    DATA_MOVEMENT,
    ELEMENTWISE,
    MATMUL,
    NORMALISATION,
    OPTIMIZER,
    POOLING,
    RECURRENT,
    REDUCTION,
)

OPS = (
    (r"^Optimizer\.|_foreach_|^aten::_fused_(adam|sgd|adagrad)", OPTIMIZER),
    (r"(gru|lstm|rnn)(_cell)?|Gru|Lstm|Rnn|_thnn_fused", RECURRENT),
    (r"conv|Conv|mkldnn_convolution|slow_conv", CONVOLUTION),
    (r"max_pool|avg_pool|adaptive_.*pool|MaxPool|AvgPool|pool2d", POOLING),
    (
        r"batch_norm|layer_norm|group_norm|native_norm|BatchNorm|LayerNorm|softmax|Softmax",
        NORMALISATION,
    ),
    (r"::(mm|bmm|addmm|matmul|linear|baddbmm|addmv|mv|dot|einsum|_addmm_activation)$", MATMUL),
    (r"(Mm|Addmm|Bmm|MatMul|Linear|Mv)Backward", MATMUL),
    (
        r"nll_loss|cross_entropy|::(sum|mean|argmax|argmin|max|min|amax|amin|eq|prod|norm|all|any)$",
        REDUCTION,
    ),
    (r"(Sum|Mean|NllLoss|Max|Min)Backward", REDUCTION),
    (
        r"::(copy_|_to_copy|to|contiguous|clone|cat|stack|index|index_select|gather|scatter|"
        r"transpose|permute|t|view|reshape|_reshape_alias|as_strided|expand|squeeze|unsqueeze|"
        r"slice|select|narrow|flatten|split|chunk|unbind|embedding|embedding_backward|"
        r"embedding_dense_backward|_unsafe_view|detach|alias|lift_fresh|zero_|fill_|empty|"
        r"empty_like|empty_strided|zeros|zeros_like|ones|ones_like|full|resize_|set_|"
        r"index_put_|_index_put_impl_|masked_fill_|pad|constant_pad_nd)$",
        DATA_MOVEMENT,
    ),
    (
        r"cudaMemcpy|Memcpy|Memset|AccumulateGrad|(Copy|Clone|View|Transpose|T|Permute|Reshape|"
        r"Unsafe.*|Select|Slice|Cat|Stack|Embedding|Index|Expand|Squeeze|Unsqueeze)Backward",
        DATA_MOVEMENT,
    ),
    (r"^aten::|^autograd::|Backward|^void at::native|elementwise_kernel|vectorized_", ELEMENTWISE),
)

EXAMPLES = {
    "aten::mm": MATMUL,
    "aten::addmm": MATMUL,
    "autograd::engine::evaluate_function: AddmmBackward0": MATMUL,
    "aten::mkldnn_convolution": CONVOLUTION,
    "aten::convolution_backward": CONVOLUTION,
    "aten::max_pool2d_with_indices": POOLING,
    "aten::_log_softmax": NORMALISATION,
    "aten::gru": RECURRENT,
    "aten::sum": REDUCTION,
    "aten::nll_loss_forward": REDUCTION,
    "aten::argmax": REDUCTION,
    "aten::copy_": DATA_MOVEMENT,
    "aten::_to_copy": DATA_MOVEMENT,
    "aten::t": DATA_MOVEMENT,
    "torch::autograd::AccumulateGrad": DATA_MOVEMENT,
    "aten::bernoulli_": ELEMENTWISE,
    "aten::clamp_min": ELEMENTWISE,
    "aten::threshold_backward": ELEMENTWISE,
    "aten::_foreach_mul_": OPTIMIZER,
    "Optimizer.step#RMSprop.step": OPTIMIZER,
}

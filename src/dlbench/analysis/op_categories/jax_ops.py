"""jax.profiler's op names (dlbench.run.op_profilers.in_jax) to categories.

An op is one executed HLO instruction of XLA's optimized program, named
``<instruction> (<kind>) <jax operation>``: the kind is the instruction's
opcode, or for a fusion the heaviest op it fuses (``dot fusion``,
``convolution fusion``, ``reduce fusion``, ``elementwise fusion``, or the
data movement it only does: ``transpose fusion``); the jax operation is the
HLO metadata's path (``jvp(dense)/dot_general``, Keras layers' and jax
functions' scopes in it), empty where XLA made the op itself. The kind
decides first; the path tells what an elementwise or reducing op belongs
to (a softmax, a batch normalisation, a recurrent layer's loop, dropout's
random numbers). The optimizer's update is the profiler's scope (its ops'
Python source: optax, Keras' optimizers); Keras' optimizers also name it in
the path (``rm_sprop/sub``), plain optax does not. On a GPU an op is a
kernel named the same way, or the kernel's own name outside any HLO op
(a copy between host and device)."""

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

# The kind in brackets, and the path after it.
_KIND = r"^\S+ \("
_PATH = r"\) .*"
_DATA_MOVEMENT_KINDS = (
    r"copy|transpose|gather|scatter|concatenate|pad|slice|dynamic-slice|dynamic-update-slice|"
    r"reverse|convert|bitcast-convert|broadcast|reshape|bitcast|iota|tuple|get-tuple-element|"
    r"copy-start|copy-done|send|recv|send-done|recv-done|infeed|outfeed|"
    # the devices' collectives: a gradient's all-reduce moves it between devices
    r"all-reduce|all-gather|all-to-all|reduce-scatter|collective-permute"
)

OPS = (
    # Keras 3's optimizers name their update's scope after their class (RMSprop: rm_sprop);
    # the profiler gives their ops (and optax's) the optimizer's scope by their source too
    (
        r"\) (.*[/(])?(rm_sprop|adam|adam_w|adadelta|adagrad|adamax|adafactor|nadam|ftrl|lion|"
        r"lamb|muon|sgd|loss_scale_optimizer)(_\d+)?/",
        OPTIMIZER,
    ),
    (_KIND + r"(convolution|custom-call[^)]*conv)", CONVOLUTION),
    (_KIND + r"(dot|custom-call[^)]*(gemm|matmul))", MATMUL),
    # dropout's random numbers, threefry's own loop included
    (_PATH + r"(_bernoulli|_uniform|threefry|random_bits|dropout)", ELEMENTWISE),
    # a recurrent layer's loop (lax.scan's while) and what runs in it but its dots
    (r"\) (.*[/(])?(while|gru|lstm|simple_rnn|rnn)(_\d+)?([/)]|$)", RECURRENT),
    (_KIND + r"(reduce-window|select-and-scatter)", POOLING),
    # Keras' pooling layers (max_pooling2d, pool1_pool, avg_pool; not pool1_pad), lax's windows
    (_PATH + r"(pool(ing[123]d)?(_\d+)?([/)]|$)|reduce_window|select_and_scatter)", POOLING),
    (
        _PATH + r"(softmax|batch_norm|batchnorm|batch_normalization|layer_norm|normaliz)",
        NORMALISATION,
    ),
    (_KIND + r"(reduce|sort)( fusion)?\)", REDUCTION),
    (_PATH + r"(crossentropy|argmax|argmin)", REDUCTION),
    (_KIND + r"(" + _DATA_MOVEMENT_KINDS + r")( fusion)?\)", DATA_MOVEMENT),
    (
        _KIND + r"(elementwise fusion|(?!while|call|conditional|custom-call)[a-z][a-z-]*)\)",
        ELEMENTWISE,
    ),
    # a device's kernels outside any HLO op (no "(kind)" after their name)
    (r"^(?!\S+ \()(Memcpy|Memset|memcpy|memset)", DATA_MOVEMENT),
    (r"^(?!\S+ \().*(gemm|cublas|cutlass|matmul)", MATMUL),
    (r"^(?!\S+ \().*(conv|cudnn)", CONVOLUTION),
)

EXAMPLES = {
    "ynn_fusion.6 (dot fusion) jvp()/dot_general": MATMUL,
    "dot (dot) transpose(jvp(dense))/transpose": MATMUL,
    "ynn_fusion.8 (dot fusion) transpose(jvp(lstm))/while/body/closed_call/lstm_cell/dot_general": (
        MATMUL
    ),
    "ynn_fusion (convolution fusion) conv5_block2_1_conv/conv_general_dilated": CONVOLUTION,
    "ynn_fusion.10 (convolution fusion) jvp()/conv_general_dilated": CONVOLUTION,
    "ynn_fusion.1 (convolution fusion)": CONVOLUTION,
    "convolution (convolution) transpose(jvp(conv2d_1))/conv_general_dilated": CONVOLUTION,
    "add_divide_fusion.1 (elementwise fusion) jvp(gru)/while/body/closed_call/div": RECURRENT,
    "wrapped_add.9 (elementwise fusion) transpose(jvp())/while/body/closed_call/add_any": RECURRENT,
    "while.55 (while) jvp(lstm)/while": RECURRENT,
    "copy_bitcast_fusion (transpose fusion) transpose(jvp(gru))/transpose": RECURRENT,
    "wrapped_reduce-window (reduce-window fusion)": POOLING,
    "wrapped_reduce-window (reduce-window fusion) pool1_pool/reduce_window_max": POOLING,
    "wrapped_scatter (scatter fusion) transpose(jvp())/select_and_scatter": POOLING,
    "subtract_exponential_fusion (elementwise fusion) jvp(jit(log_softmax))/exp": NORMALISATION,
    "negate_divide_fusion (reduce fusion) transpose(jvp(jit(log_softmax)))/reduce_sum": (
        NORMALISATION
    ),
    "ynn_fusion.2 (reduce fusion) transpose(jvp())/reduce_sum": REDUCTION,
    "add_reduce_fusion (reduce fusion) dense_1/reduce_max": REDUCTION,
    "log_multiply_fusion (elementwise fusion) jvp(compile_loss)/categorical_crossentropy/mul": (
        REDUCTION
    ),
    "broadcast_maximum_fusion (elementwise fusion) jvp()/jit(relu)/max": ELEMENTWISE,
    "add_maximum_fusion.31 (elementwise fusion) conv2_block2_out/jit(relu)/max": ELEMENTWISE,
    "maximum_pad_fusion (elementwise fusion) pool1_pad/jit(_pad)/pad": ELEMENTWISE,
    "broadcast_add_fusion.4 (elementwise fusion) "
    "jvp(jit(_bernoulli))/jit(_uniform)/while/body/closed_call/add": ELEMENTWISE,
    "while.49 (while) jvp(dropout)/jit(_bernoulli)/jit(_uniform)/while": ELEMENTWISE,
    "multiply_select_fusion.2 (elementwise fusion) jvp(jit(_where))/select_n": ELEMENTWISE,
    "multiply_subtract_fusion.5 (elementwise fusion) rm_sprop/sub": OPTIMIZER,
    "divide_subtract_fusion.5 (elementwise fusion) adam/sub": OPTIMIZER,
    "add_sqrt_fusion.3 (elementwise fusion) adadelta/sqrt": OPTIMIZER,
    "copy.99 (copy)": DATA_MOVEMENT,
    "wrapped_iota (iota fusion)": DATA_MOVEMENT,
    "transpose_copy_fusion (transpose fusion)": DATA_MOVEMENT,
    "concatenate_bitcast_fusion (concatenate fusion)": DATA_MOVEMENT,
    "wrapped_broadcast.2 (broadcast fusion) "
    "transpose(jvp(embedding))/jit(_take)/broadcast_in_dim": DATA_MOVEMENT,
    "wrapped_scatter (scatter fusion) transpose(jvp(embedding))/jit(_take)/scatter-add": (
        DATA_MOVEMENT
    ),
}

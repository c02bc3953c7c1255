"""Keras 3 on TensorFlow: its threads, its MirroredStrategy on devices >= 2,
its hidden settings, and the sparse Embedding gradient its optimizers square
per occurrence (keras_adapter; what a module here provides: keras_on).
Importable on Python 3.6."""

from dlbench.run import launch, manifest
from dlbench.run.backends import frameworks

# Found by the equivalence check (babi_rnn, imdb_gru, imdb_transformer on
# keras-tensorflow departed at steps 1-2): in Keras 3 (3.15.1) on TensorFlow
# an Embedding's gradient is a tf.IndexedSlices with one row per occurrence
# of a word in the batch, and the optimizers' elementwise ops square each row
# apart, so a word seen twice adds g1^2 + g2^2 to its second moment where
# JAX and torch add (g1 + g2)^2 (two Adam steps on a word seen twice: 0.044
# against 0.092). The first moment is linear and agrees; SGD is unaffected.
SPARSE_SQUARES = (
    "Keras 3 on TensorFlow: an Embedding's sparse gradient is squared per occurrence of a "
    "word in the batch, not per word, in the optimizer's second moment"
)
SQUARES_THE_GRADIENT = ("adam", "rmsprop", "adadelta")


def setup(adapter, threads, seed):
    frameworks.sweep_autograph_bytecode_at_exit()
    import tensorflow as tf

    emulated = launch.emulated_devices(adapter.parallel)
    adapter.applied.update(frameworks.pin_tensorflow(tf, threads, emulated))


def versions(tf):
    info = tf.sysconfig.get_build_info()
    return {"cuda": info.get("cuda_version"), "cudnn": info.get("cudnn_version")}


def set_hidden_settings(adapter):
    import tensorflow as tf

    manifest.set_tensorflow(tf, adapter.precision, adapter.requested)


def read_manifest(adapter, threads):
    import tensorflow as tf

    mode = adapter.compile_mode("XLA", eager="eager (tf.function graph)")
    return manifest.tensorflow_manifest(tf, adapter.on_gpu, mode)


def one_device(adapter):
    """Keras' own placement on the GPU; a GPU run that finds none fails."""
    if adapter.emulated:
        return
    import tensorflow as tf

    frameworks.tensorflow_devices(tf, adapter.framework, 1, False)


def distribute(adapter, devices):
    """A MirroredStrategy over the devices (models are built and trained in
    its scope: keras_parallel)."""
    import tensorflow as tf

    found = frameworks.tensorflow_devices(tf, adapter.framework, devices, adapter.emulated)
    adapter.strategy = tf.distribute.MirroredStrategy(found)
    if adapter.emulated:
        # XLA cannot reach the other logical CPUs' variable copies
        # ("Trying to access resource ... located in device CPU:1").
        adapter.forced_jit = "off: XLA cannot use variables of other emulated CPU devices"


def replica_divergence(adapter, model):
    """The largest difference between a weight's copies on the strategy's
    replicas; None without a strategy."""
    if adapter.strategy is None:
        return None
    largest = 0.0
    for variable in model.variables:
        copies = list(variable.value.values)
        largest = max(largest, frameworks.largest_difference(copies))
    return largest


def recurrent_kernel(name, devices):
    """TensorFlow's own GRU/LSTM: cuDNN's on a GPU."""
    where = "GPU: cuDNN" if devices else "CPU"
    return "tensorflow's own {} ({})".format(name.upper(), where)


def own_rules(adapter, model, optimizer_name):
    """SPARSE_SQUARES, where an optimizer that squares the gradient meets an
    Embedding."""
    if optimizer_name not in SQUARES_THE_GRADIENT:
        return []
    layers = model._flatten_layers(include_self=False)
    return [SPARSE_SQUARES] if any(type(x).__name__ == "Embedding" for x in layers) else []


def prepare_check(adapter, model, hyper):
    """For the equivalence check: where Keras 3 on TensorFlow hands the
    optimizer an Embedding's gradient as tf.IndexedSlices (one row per
    occurrence, SPARSE_SQUARES), the optimizer gets it dense (rows of a
    word summed, tf.convert_to_tensor), as JAX and torch compute it.
    What it changed, for the check's record."""
    if SPARSE_SQUARES not in adapter.applied.get("own_rules", []):
        return {}
    import tensorflow as tf

    optimizer = model.optimizer
    apply = optimizer.apply

    def dense_apply(grads, trainable_variables=None):
        grads = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads]
        return apply(grads, trainable_variables)

    optimizer.apply = dense_apply  # before the train step is traced
    return {"dense_gradients": "Embedding gradients densified before the optimizer"}

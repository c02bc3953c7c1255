"""The adapter contract: what the harness, the equivalence check and parity
ask of every framework family (dlbench.run.backends). Importable on Python
3.6: adapters import their framework only inside ``setup``."""

from dlbench.registry import BUILT_IN
from dlbench.run import launch


class Adapter(object):
    """One framework family behind the operations the harness needs.
    Subclasses implement the methods that raise NotImplementedError; the
    others have the defaults of a framework that computes on the host."""

    def __init__(self, framework, settings):
        self.framework = framework
        # Where ``build`` finds the workload (dlbench.registry; adapter_for sets the run's).
        self.registry = BUILT_IN
        self.requested = dict(settings)
        self.applied = {}  # the settings that ran, for the record (applied_settings())
        self.parallel = dict(launch.ON_THE_CPU)
        # The run's first training step (trace, compile, autotune), in seconds.
        self.first_step_seconds = None
        # Where the framework reports its compiles: a dlbench.run.compiles.Counter.
        self.compile_counter = None
        # Set in ``setup``: reads the hidden settings back from the framework
        # (dlbench.run.manifest); ``applied_settings`` calls it once, when the record
        # is written, so that its probes run outside every clock.
        self.read_manifest = None
        self._manifest_read = None
        # Set by the caller before ``build`` when shared weights will be
        # loaded into the model: the adapter may skip its own random draw.
        self.weights_follow = False

    def setup(self, threads, seed, devices, parallel=None):
        """Pin the framework's threads and seed it; on devices >= 1 set up
        data parallelism as ``parallel`` says (dlbench.plan.matrix's
        data_parallel plus this process' rank, local_rank and processes:
        dlbench.run.launch)."""
        raise NotImplementedError

    def versions(self):
        """{distribution: version} of the framework, for the record."""
        raise NotImplementedError

    def applied_settings(self):
        """The settings that ran (jit, kernels, precision, threads) and the
        manifest of hidden settings, read back once."""
        found = dict(self.applied)
        if self._manifest_read is None and self.read_manifest is not None:
            self._manifest_read = self.read_manifest()
        if self._manifest_read is not None:
            found["manifest"] = self._manifest_read
        return found

    def build(self, model, data_spec, hyper):
        """The model, compiled; ``data_spec`` is the dataset's meta with its
        input_shape."""
        raise NotImplementedError

    def parameter_count(self, model):
        raise NotImplementedError

    # load_initial_weights(model, manifest, weights): set the shared initial
    # weights (dlbench.models.initial_weights) in this framework's layout,
    # raising where they do not fit. None: the backend cannot load them yet
    # (the harness records why and the run starts from its own draw).
    load_initial_weights = None

    def train_epoch(self, model, x, y, batch_size):
        """One epoch over this process' share of the data, in the order
        given, in batches of its share of the global batch: {"loss",
        "accuracy"[, "seconds"]}."""
        raise NotImplementedError

    def evaluate(self, model, x, y, batch_size):
        """(loss, accuracy) on held-out data."""
        raise NotImplementedError

    def predict(self, model, x):
        """The outputs of one batch, for inference timing."""
        raise NotImplementedError

    # recurrent_ops(model, x) -> the recurrent operators a forward pass ran
    # (torch.profiler's names), where the adapter can see them.
    recurrent_ops = None

    # training_outputs(model, x, draws) -> (draws, samples, outputs): the
    # model's outputs in training mode (its dropout on, fresh masks at every
    # draw), as predict gives them, for the equivalence check's dropout
    # draws. None: the backend has no training-mode pass (inference only).
    training_outputs = None

    # prepare_check(model, hyper) -> {setting: what it ran}: called by the
    # equivalence check after build, where the framework cannot run the
    # check's settings as built (an epsilon it fixes, a sparse gradient).
    prepare_check = None

    def replica_divergence(self, model):
        """The largest weight difference between data-parallel replicas, or
        None where there is one copy."""
        return None

    def synchronize(self):
        """Wait for queued device work (the adapters that return host values
        have none)."""

    def peak_device_memory_mb(self):
        return None

    def close(self):
        """Release what setup took (torchrun's process group) before the
        process exits."""

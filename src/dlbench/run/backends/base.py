"""The adapter contract: what the harness, the equivalence check and parity
ask of every framework family (dlbench.run.backends). Importable on Python
3.6: adapters import their framework only inside ``setup``."""

from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Optional, Tuple

from dlbench.registry import BUILT_IN
from dlbench.run import compiles, launch
from dlbench.run.run_data import Inputs

if TYPE_CHECKING:
    import numpy


class Adapter(object):
    """One framework family behind the operations the harness needs.
    Subclasses implement the methods that raise NotImplementedError; the
    others have the defaults of a framework that computes on the host."""

    def __init__(self, framework: str, settings: Mapping[str, Any]) -> None:
        self.framework = framework
        # Where ``build`` finds the workload (dlbench.registry; adapter_for sets the run's).
        self.registry = BUILT_IN
        self.requested = dict(settings)
        # The settings that ran, for the record (applied_settings()).
        self.applied: Dict[str, Any] = {}
        self.parallel = dict(launch.ON_THE_CPU)
        # The run's first training step (trace, compile, autotune), in seconds.
        self.first_step_seconds: Optional[float] = None
        # Where the framework reports its compiles: a dlbench.run.compiles.Counter.
        self.compile_counter: Optional[compiles.Counter] = None
        # Set in ``setup``: reads the hidden settings back from the framework
        # (dlbench.run.manifest); ``applied_settings`` calls it once, when the record
        # is written, so that its probes run outside every clock.
        self.read_manifest: Optional[Callable[[], Dict[str, Any]]] = None
        self._manifest_read: Optional[Dict[str, Any]] = None
        # Set by the caller before ``build`` when shared weights will be
        # loaded into the model: the adapter may skip its own random draw.
        self.weights_follow = False

    def setup(
        self, threads: int, seed: int, devices: int, parallel: Optional[launch.Parallel] = None
    ) -> None:
        """Pin the framework's threads and seed it; on devices >= 1 set up
        data parallelism as ``parallel`` says (dlbench.plan.matrix's
        data_parallel plus this process' rank, local_rank and processes:
        dlbench.run.launch)."""
        raise NotImplementedError

    def versions(self) -> Dict[str, str]:
        """{distribution: version} of the framework, for the record."""
        raise NotImplementedError

    def applied_settings(self) -> Dict[str, Any]:
        """The settings that ran (jit, kernels, precision, threads) and the
        manifest of hidden settings, read back once."""
        found = dict(self.applied)
        if self._manifest_read is None and self.read_manifest is not None:
            self._manifest_read = self.read_manifest()
        if self._manifest_read is not None:
            found["manifest"] = self._manifest_read
        return found

    def build(self, model: str, data_spec: Dict[str, Any], hyper: Dict[str, Any]) -> Any:
        """The model, compiled; ``data_spec`` is the dataset's meta with its
        input_shape."""
        raise NotImplementedError

    def parameter_count(self, model: Any) -> int:
        raise NotImplementedError

    # load_initial_weights(model, layout, weights): set the shared initial
    # weights (dlbench.models.initial_weights) in this framework's layout,
    # raising where they do not fit. None: the backend cannot load them yet
    # (the harness records why and the run starts from its own draw).
    load_initial_weights: Optional[Callable[..., None]] = None

    def train_epoch(
        self, model: Any, x: Inputs, y: "numpy.ndarray", batch_size: int
    ) -> Dict[str, float]:
        """One epoch over this process' share of the data, in the order
        given, in batches of its share of the global batch: {"loss",
        "accuracy"[, "seconds"]}."""
        raise NotImplementedError

    def evaluate(
        self, model: Any, x: Inputs, y: "numpy.ndarray", batch_size: int
    ) -> Tuple[float, float]:
        """(loss, accuracy) on held-out data."""
        raise NotImplementedError

    def predict(self, model: Any, x: Inputs) -> "numpy.ndarray":
        """The outputs of one batch, for inference timing."""
        raise NotImplementedError

    # recurrent_ops(model, x) -> the recurrent operators a forward pass ran
    # (torch.profiler's names), where the adapter can see them.
    recurrent_ops: Optional[Callable[[Any, Inputs], Any]] = None

    # training_outputs(model, x, draws) -> (draws, samples, outputs): the
    # model's outputs in training mode (its dropout on, fresh masks at every
    # draw), as predict gives them, for the equivalence check's dropout
    # draws. None: the backend has no training-mode pass (inference only).
    training_outputs: Optional[Callable[[Any, Inputs, int], Any]] = None

    # prepare_check(model, hyper) -> {setting: what it ran}: called by the
    # equivalence check after build, where the framework cannot run the
    # check's settings as built (an epsilon it fixes, a sparse gradient).
    prepare_check: Optional[Callable[[Any, Dict[str, Any]], Dict[str, Any]]] = None

    def replica_divergence(self, model: Any) -> Optional[float]:
        """The largest weight difference between data-parallel replicas, or
        None where there is one copy."""
        return None

    def synchronize(self) -> None:
        """Wait for queued device work (the adapters that return host values
        have none)."""

    def peak_device_memory_mb(self) -> Optional[float]:
        return None

    def close(self) -> None:
        """Release what setup took (torchrun's process group) before the
        process exits."""

"""What the benchmark knows about: the built-in datasets and the backends.

Read-only data and what follows from it, importable on every pinned Python
(3.6 and later), so that the workflow, the harness inside a backend
environment and the tests share one list. The workloads are their folders
(dlbench.models.workloads); a config's own models and datasets join the
built-in ones in a registry (dlbench.registry), never here.

Imports: host (the CPU's instruction sets, for n/a reasons).
"""

import os.path
from collections.abc import Mapping
from types import MappingProxyType
from urllib.parse import urlparse

from dlbench.host import cpu_isa

# Where a dataset's raw files come from. ``sha256`` (or ``md5:...``) is checked
# before anything reads the file. ``base_url`` is the canonical location that
# Keras' own loaders use; ``data_mirror`` in the config replaces it. ``input``
# is the kind of model input the prepared dataset provides.
KERAS_DATASETS = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
_DATASETS = {
    "mnist": {
        "base_url": KERAS_DATASETS,
        "files": {
            "mnist.npz": "sha256:731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1",
        },
        "input": "image28",
    },
    # Keras' loader uses a copy without hashes; the publisher's own location
    # comes with published MD5s, so the bytes can be checked.
    "fashion_mnist": {
        "base_url": "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
        "files": {
            "train-labels-idx1-ubyte.gz": "md5:25c81989df183df01b3e8a0aad5dffbe",
            "train-images-idx3-ubyte.gz": "md5:8d4fb7e6c68d591d4c3dfef9ec88bf0d",
            "t10k-labels-idx1-ubyte.gz": "md5:bb300cfdad3c16e7a12a480ee83cd310",
            "t10k-images-idx3-ubyte.gz": "md5:bef4ecab320f06d8554ea6380940ec79",
        },
        "input": "image28",
    },
    # The authors' binary version: fixed-length records, no pickle to load.
    "cifar10": {
        "base_url": "https://www.cs.toronto.edu/~kriz/",
        "files": {"cifar-10-binary.tar.gz": "md5:c32a1d4ab5d03f1284b67883e8d87530"},
        "input": "image32",
    },
    # Reviews as word ranks (Keras' ragged npz); prepared as the
    # DeepLearningFrameworks GRU workload uses them: 30,000 words, length 150.
    "imdb": {
        "base_url": KERAS_DATASETS,
        "files": {
            "imdb.npz": "sha256:69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f",
        },
        "input": "words150",
        "vocabulary": 30000,
        "length": 150,
    },
    # Random 224x224 images for speed only (no labels worth learning).
    "imagenet_synthetic": {
        "base_url": None,
        "files": {},
        "input": "image224",
        "samples": 256,
        "classes": 1000,
    },
    # bAbI task 2 (two supporting facts, 1k questions per split), as the
    # Keras example reads it. No checksum is published: the first download's
    # SHA-256 is recorded and later downloads are checked against it.
    "babi": {
        "base_url": "https://s3.amazonaws.com/text-datasets/",
        "files": {"babi_tasks_1-20_v1-2.tar.gz": None},
        "input": "story_question",
    },
    # Generated stand-ins in the original file formats (dlbench.data.datasets.fixtures),
    # read by the same code as the dataset they are ``like``: the smoke
    # config and CI run these workloads offline.
    "cifar10_tiny": {
        "like": "cifar10",
        "generated": {"per_batch": 100, "test": 200},
        "files": {"cifar-10-binary.tar.gz": None},
        "input": "image32",
    },
    "imdb_tiny": {
        "like": "imdb",
        "generated": {"train": 512, "test": 256},
        "files": {"imdb.npz": None},
        "input": "words150",
        "vocabulary": 30000,
        "length": 150,
    },
    "babi_tiny": {
        "like": "babi",
        "generated": {"train": 500, "test": 200},
        "files": {"babi_tasks_1-20_v1-2.tar.gz": None},
        "input": "story_question",
    },
    # Generated at the real datasets' sizes and shapes, for speed on a machine
    # without network (config key generated_data): the same work per epoch,
    # data that says nothing about accuracy on the real set.
    "mnist_generated": {
        "like": "mnist",
        "generated": {"train": 60000, "test": 10000},
        "files": {"mnist.npz": None},
        "input": "image28",
    },
    "cifar10_generated": {
        "like": "cifar10",
        "generated": {"per_batch": 10000, "test": 10000},
        "files": {"cifar-10-binary.tar.gz": None},
        "input": "image32",
    },
    "imdb_generated": {
        "like": "imdb",
        "generated": {"train": 25000, "test": 25000},
        "files": {"imdb.npz": None},
        "input": "words150",
        "vocabulary": 30000,
        "length": 150,
    },
    "babi_generated": {
        "like": "babi",
        "generated": {"train": 1000, "test": 1000},
        "files": {"babi_tasks_1-20_v1-2.tar.gz": None},
        "input": "story_question",
    },
    # scikit-learn's bundled 8x8 digits, upsampled to 28x28: real data that
    # needs no network, for the smoke config and the tests.
    "digits": {"base_url": None, "files": {}, "input": "image28"},
}
# Read-only: a config's own datasets join them in a registry (dlbench.registry).
DATASETS = MappingProxyType(_DATASETS)

INPUT_SHAPES = {
    "image28": (28, 28, 1),
    "image32": (32, 32, 3),
    "image224": (224, 224, 3),
    "words150": (150,),
    # Two named inputs; their lengths are those of the longest story and
    # question in the data.
    "story_question": {"story": (None,), "question": (None,)},
    # A synthetic dataset's own shape (the config's synthetic_datasets): input_shape_of
    "synthetic": None,
}
SYNTHETIC = "synthetic"


def input_shape(entry):
    """The shape of one sample of a dataset's model input, from its entry (a
    dict of them for several named inputs; None where the data decides a length)."""
    if SYNTHETIC in entry:
        return tuple(entry[SYNTHETIC]["input_shape"])
    return INPUT_SHAPES[entry["input"]]


# Several named inputs are stored as x_<split>__<name> in a prepared file.
INPUT_SEPARATOR = "__"
# The array a prepared file holds instead of the data where the data could
# not be had (a download that failed): the reason.
UNAVAILABLE_DATA = "unavailable"
# How a run's record says so (its reason begins with it).
NO_DATA_REASON = "dataset {} unavailable: "

TASKS = ("train", "infer")
TASK_WORDS = {"train": "training", "infer": "inference"}
URL_SCHEMES = ("http", "https", "ftp", "sftp")

# A backend is a family (which adapter builds and runs the model) and the
# framework underneath. One adapter serves every backend of its family. A
# backend runs the tasks listed; other cells are shown as not applicable.
# ``data_parallel`` says how a run on devices >= 1 is launched (see
# dlbench.run.launch): "one_process" drives every device from one process,
# "process_per_device" starts one process per device (torchrun); ``unsupported``
# gives the reason where there is no data-parallel training. ``gpu_build``: an
# envs/<backend>.cuda.yaml exists for NVIDIA GPUs; ``gpu_only``: why the backend
# has no cell on the CPU (nor an envs/<backend>.yaml). ``environment_setup``: a step
# its environment needs after pip (dlbench.environments.envspec.SETUP_STEPS).
# ``adapter_module``: the adapter's module where it is not the convention's
# dlbench.run.backends.<adapter>_adapter. What a backend computes wrongly or
# not at all for one workload is the workload's (its folder's CANNOT_RUN).
# ``compile_cache``: the framework compiles its ops to C into a cache of its
# environment that one process at a time fills (the others wait on its lock),
# named for the Snakemake resource that lets one of its jobs run at a time.
# devices=1: the framework's own single-device program (run_spec.data_parallel).
SINGLE_DEVICE = "none: one device runs the single-device program"
ONE_DEVICE_KERAS2 = "Keras 2's {} backend trains on one device: multi_gpu_model is TensorFlow-only"
#
# Precision and compilation are dimensions of the matrix (dlbench.plan.matrix):
# ``precision`` maps each reduced precision a backend runs to how it does it
# (float32 runs everywhere), ``precision_note`` says why the others are not
# applicable; ``compile`` maps eager and compiled to the backend settings
# that make them (``auto``, everywhere: the config's measured choice), and
# ``compile_note`` says why a mode is missing. ``precision_cpu_level`` names
# the oneDNN level (dlbench.host.cpu_isa) from which the framework has CPU kernels
# for a precision: below it, that precision's CPU cells are n/a. "Compiled" means the
# framework's optimising compiler (XLA, torch.compile, Gluon's hybridize);
# "eager" runs without it (TensorFlow still traces a graph, tf.function).
FLOAT32 = "float32"
# tf32: float32 tensors whose matrix products and convolutions may round
# their inputs to TensorFloat-32 where the hardware has it (dlbench.run.manifest);
# float32 is IEEE float32 on every backend that can be told so.
TF32 = "tf32"
PRECISIONS = (FLOAT32, TF32, "mixed_bfloat16", "mixed_float16")
TF32_MODES = {
    "keras-tensorflow": "tf.config.experimental.enable_tensor_float_32_execution(True)",
    "native-tensorflow": "tf.config.experimental.enable_tensor_float_32_execution(True)",
    "keras-jax": "jax_default_matmul_precision tensorfloat32",
    "native-jax": "jax_default_matmul_precision tensorfloat32",
    "keras-torch": "torch.backends fp32_precision tf32 (cuBLAS, cuDNN, oneDNN)",
    "native-torch": "torch.backends fp32_precision tf32 (cuBLAS, cuDNN, oneDNN)",
    "native-cudnn": "CUDNN_DEFAULT_MATH convolutions, CUBLAS_TF32_TENSOR_OP_MATH products",
}
NO_TF32 = "{} has no switch for TensorFloat-32: its float32 is IEEE"


def mixed(precision):
    """Whether ``precision`` computes in a reduced dtype (tf32 computes in
    float32 tensors)."""
    return precision not in (FLOAT32, TF32)


COMPILE_AUTO = "auto"
COMPILE_MODES = (COMPILE_AUTO, "eager", "compiled")
KERAS3_PRECISION = {
    "mixed_bfloat16": "Keras dtype policy mixed_bfloat16: bfloat16 compute, float32 variables",
    "mixed_float16": "Keras dtype policy mixed_float16: float16 compute, float32 variables, "
    "loss scaling (compile's auto_scale_loss: a LossScaleOptimizer)",
}
KERAS2_PRECISION = (
    "Keras 2.2/2.3 has no mixed-precision policy (it came with tf.keras 2.1 and Keras 3)"
)
JAX_EAGER = (
    "JAX runs compiled by design (jax.jit); op-by-op dispatch (jax.disable_jit, Keras' "
    "jit_compile=False on JAX) is a debugging mode nobody trains in"
)
CNTK_COMPILED = "CNTK runs every model as a static graph in its own engine: it has no eager mode"
XLA_OR_NOT = {"eager": {"jit_compile": False}, "compiled": {"jit_compile": True}}
BACKEND_DEFINITIONS = {
    "keras-tensorflow": {
        "precision": KERAS3_PRECISION,
        "compile": XLA_OR_NOT,
        "family": "keras",
        "framework": "tensorflow",
        "tasks": TASKS,
        "data_parallel": {"launch": "one_process", "method": "tf.distribute.MirroredStrategy"},
        "gpu_build": True,
    },
    "keras-jax": {
        "precision": KERAS3_PRECISION,
        "compile": {"compiled": {"jit_compile": True}},
        "compile_note": JAX_EAGER,
        "family": "keras",
        "framework": "jax",
        "tasks": TASKS,
        "data_parallel": {"launch": "one_process", "method": "keras.distribution.DataParallel"},
        "gpu_build": True,
    },
    "keras-torch": {
        "precision": KERAS3_PRECISION,
        # compiled: torch.compile (inductor), Keras' jit_compile on torch
        "compile": XLA_OR_NOT,
        "family": "keras",
        "framework": "torch",
        "tasks": TASKS,
        "data_parallel": {
            "launch": "process_per_device",
            "method": "torch DistributedDataParallel (torchrun)",
        },
        "gpu_build": True,
    },
    # Keras' OpenVINO backend runs predict only; fit is not implemented.
    "keras-openvino": {
        "precision": {
            "mixed_bfloat16": "OpenVINO CPU plugin, INFERENCE_PRECISION_HINT bf16",
            "mixed_float16": "OpenVINO CPU plugin, INFERENCE_PRECISION_HINT f16",
        },
        # OpenVINO computes in another precision where the CPU lacks these
        # (measured on a Zen 4, avx512_bf16 without avx512_fp16: f16 asked, bf16 ran).
        "precision_cpu_level": {
            "mixed_bfloat16": "AVX512_CORE",
            "mixed_float16": "AVX512_CORE_FP16",
        },
        "compile": {"compiled": {}},
        "compile_note": "OpenVINO always compiles the model for its CPU plugin",
        "family": "keras",
        "framework": "openvino",
        "tasks": ("infer",),
        "data_parallel": {"unsupported": "inference only"},
        "gpu_build": False,
    },
    # The seed systems: Keras 2 on Theano, CNTK and MXNet, through the same
    # model definitions (the keras2 adapter's compatibility layer).
    "keras2-theano": {
        "precision_note": KERAS2_PRECISION,
        "compile": {"compiled": {}},
        "compile_note": "Theano compiles every graph to C (theano.function): it has no eager mode",
        "family": "keras",
        "adapter": "keras2",
        "framework": "theano",
        "tasks": TASKS,
        "data_parallel": {"unsupported": ONE_DEVICE_KERAS2.format("Theano")},
        "compile_cache": "theano",
        "gpu_build": False,
    },
    "keras2-cntk": {
        "precision_note": KERAS2_PRECISION,
        "compile": {"compiled": {}},
        "compile_note": CNTK_COMPILED,
        "family": "keras",
        "adapter": "keras2",
        "framework": "cntk",
        "tasks": TASKS,
        "data_parallel": {"unsupported": ONE_DEVICE_KERAS2.format("CNTK")},
        "gpu_build": False,
        # OpenMPI 1.10 for CNTK 2.7, in the environment (envspec.SETUP_STEPS)
        "environment_setup": "openmpi_for_cntk",
    },
    "keras-mxnet": {
        "precision_note": KERAS2_PRECISION,
        "compile": {"compiled": {}},
        "compile_note": "keras-mxnet binds MXNet's symbolic executors (the graph Gluon's hybridize "
        "makes): it has no eager mode",
        "family": "keras",
        "adapter": "keras2",
        "framework": "mxnet",
        "tasks": TASKS,
        "data_parallel": {
            "launch": "one_process",
            "method": "keras-mxnet compile(context=[...]): MXNet Module, one executor per device",
        },
        "gpu_build": True,
    },
    # Native implementations: the framework's own API, no Keras; the workloads
    # a family implements are its modules in dlbench/models/workloads/<model>/ (the
    # others show as n/a). ``keras`` names the Keras backend on the same framework (the
    # abstraction cost compares the two).
    "native-torch": {
        "precision": {
            "mixed_bfloat16": "torch.autocast(bfloat16): bfloat16 compute where autocast "
            "lists the op, float32 parameters",
            "mixed_float16": "torch.autocast(float16), float32 parameters, torch.amp.GradScaler",
        },
        "compile": XLA_OR_NOT,
        "family": "torch",
        "adapter": "native_torch",
        "framework": "torch",
        "keras": "keras-torch",
        "tasks": TASKS,
        "data_parallel": {
            "launch": "process_per_device",
            "method": "torch DistributedDataParallel (torchrun)",
        },
        "gpu_build": True,
    },
    "native-tensorflow": {
        "precision": {
            "mixed_bfloat16": "float32 variables cast to bfloat16 where the layers use them, "
            "loss in float32 (Keras' mixed policy, by hand)",
            "mixed_float16": "float32 variables cast to float16, dynamic loss scaling by "
            "Keras' LossScaleOptimizer rule",
        },
        "compile": XLA_OR_NOT,
        "family": "tensorflow",
        "adapter": "native_tensorflow",
        "framework": "tensorflow",
        "keras": "keras-tensorflow",
        "tasks": TASKS,
        "data_parallel": {"launch": "one_process", "method": "tf.distribute.MirroredStrategy"},
        "gpu_build": True,
    },
    "native-jax": {
        "precision": {
            "mixed_bfloat16": "float32 parameters cast to bfloat16 for the forward pass, loss "
            "in float32 (jmp's and Flax's dtype / param_dtype scheme)",
            "mixed_float16": "float32 parameters cast to float16, dynamic loss scaling by "
            "Keras' LossScaleOptimizer rule (as jmp's DynamicLossScale)",
        },
        "compile": {"compiled": {}},
        "compile_note": JAX_EAGER,
        "family": "jax",
        "adapter": "native_jax",
        "framework": "jax",
        "keras": "keras-jax",
        "tasks": TASKS,
        "data_parallel": {
            "launch": "one_process",
            "method": "jax.jit with NamedSharding over a device mesh "
            "(batch sharded, parameters replicated)",
        },
        "gpu_build": True,
    },
    "native-mxnet": {
        "precision": {
            "mixed_bfloat16": "MXNet AMP (contrib.amp, target bfloat16): AMP's operator lists "
            "in bfloat16, softmax and losses in float32, float32 parameters",
        },
        "precision_note": "MXNet 1.9's CPU operators have no float16 (fully connected: "
        "'only supported by CuDNN'); its float16 AMP is for GPUs",
        # Below it MXNet fails the run: "could not create a primitive
        # descriptor iterator" (an AVX2-only EPYC, and ONEDNN_MAX_CPU_ISA=AVX2).
        "precision_cpu_level": {"mixed_bfloat16": "AVX512_CORE"},
        "compile": {"eager": {"hybridize": False}, "compiled": {"hybridize": True}},
        "family": "mxnet",
        "adapter": "native_mxnet",
        "framework": "mxnet",
        "keras": "keras-mxnet",
        "tasks": TASKS,
        "data_parallel": {
            "unsupported": "CPU only: Gluon's multi-device Trainer (kvstore) is not wired up"
        },
        "gpu_build": False,
    },
    # Theano's maintained successor; its Keras counterpart is Keras 2 on Theano.
    "native-pytensor": {
        "precision_note": "PyTensor has no mixed-precision mode (floatX: one dtype for the graph)",
        "compile": {"compiled": {}},
        "compile_note": "PyTensor compiles every graph to C: it has no eager mode",
        "family": "pytensor",
        "adapter": "native_pytensor",
        "framework": "pytensor",
        "keras": "keras2-theano",
        "tasks": TASKS,
        "data_parallel": {"unsupported": "PyTensor compiles for one device"},
        "compile_cache": "pytensor",
        "gpu_build": False,
    },
    # CNTK's own API; its Keras counterpart is Keras 2 on CNTK. CNTK 2.7 is
    # the last release (Python 3.6); its GPU build wants CUDA 10 / cuDNN 7.
    "native-cntk": {
        "precision_note": "CNTK 2.7's float16 is GPU-only; no mixed mode on the CPU",
        "compile": {"compiled": {}},
        "compile_note": CNTK_COMPILED,
        "family": "cntk",
        "adapter": "native_cntk",
        "framework": "cntk",
        "keras": "keras2-cntk",
        "tasks": TASKS,
        "data_parallel": {
            "unsupported": "CPU only: CNTK's data-parallel SGD needs MPI workers, not set up"
        },
        "gpu_build": False,
        # OpenMPI 1.10 for CNTK 2.7, in the environment (envspec.SETUP_STEPS)
        "environment_setup": "openmpi_for_cntk",
    },
    # cuDNN and cuBLAS called directly (ctypes, as a C++ program would): the
    # lowest level of the cuDNN / TensorFlow / Keras latency comparison.
    "native-cudnn": {
        "precision_note": "the cuDNN LeNet is written in float32 only",
        "compile": {"eager": {}},
        "compile_note": "cuDNN and cuBLAS are called one by one: there is no compiler",
        "family": "cudnn",
        "adapter": "native_cudnn",
        "framework": "cudnn",
        "keras": None,
        "tasks": ("infer",),
        "data_parallel": {"unsupported": "inference only"},
        "gpu_only": "cuDNN computes on NVIDIA GPUs only",
        "gpu_build": True,
    },
    # Chainer has no Keras backend: no abstraction cost, lines of code only.
    "native-chainer": {
        "precision": {
            "mixed_float16": "chainer.mixed16: float16 parameters and compute, float32 master "
            "copies (use_fp32_update), Chainer's dynamic loss scaling",
        },
        "precision_note": "Chainer has no bfloat16 (its arrays are NumPy's, iDeep's and CuPy's)",
        "compile": {"eager": {}},
        "compile_note": "Chainer is define-by-run: it has no compiler",
        "family": "chainer",
        "adapter": "native_chainer",
        "framework": "chainer",
        "keras": None,
        "tasks": TASKS,
        "data_parallel": {
            "unsupported": "CPU only: Chainer's data parallelism needs ChainerMN (MPI), not set up"
        },
        "gpu_build": False,
    },
}


class Backend(Mapping):
    """One backend: its definition (read as a mapping, as written above) and
    the reasons it has no cell for a task, a device count, a precision or a
    compilation mode."""

    def __init__(self, name, definition):
        self.name = name
        self._definition = dict(definition)

    def __getitem__(self, key):
        return self._definition[key]

    def __iter__(self):
        return iter(self._definition)

    def __len__(self):
        return len(self._definition)

    def __repr__(self):
        return "Backend({!r})".format(self.name)

    @property
    def adapter(self):
        """The adapter's name (dlbench.run.backends.<adapter>_adapter)."""
        return self.get("adapter", self["family"])

    def task_not_applicable(self, task):
        """Why the backend does not run ``task`` at all, or None."""
        if task in self["tasks"]:
            return None
        return "n/a ({} only)".format(" and ".join(TASK_WORDS[t] for t in self["tasks"]))

    def devices_not_applicable(self, task, devices, accelerator):
        """Why the backend cannot run ``task`` on ``devices`` (GPUs, or CPU
        devices emulating them), or None."""
        if "gpu_only" in self and (not devices or accelerator != "gpu"):
            return "n/a ({})".format(self["gpu_only"])
        if not devices:
            return None
        if task == "infer":
            if devices > 1:
                return "n/a (inference is timed on one device)"
            if accelerator == "emulated-cpu":
                return "n/a (emulated devices exercise data-parallel training only)"
        elif "unsupported" in self["data_parallel"]:
            return "n/a ({})".format(self["data_parallel"]["unsupported"])
        if accelerator == "gpu" and not self["gpu_build"]:
            return "n/a (no NVIDIA GPU build)"
        return None

    def precision_not_applicable(self, precision):
        """Why the backend has no mode for ``precision``, or None."""
        if precision == TF32:
            if self.name in TF32_MODES:
                return None
            return "n/a ({}: {})".format(precision, NO_TF32.format(self["framework"]))
        if precision == FLOAT32 or precision in self.get("precision", {}):
            return None
        return "n/a ({}: {})".format(precision, self["precision_note"])

    def precision_cpu_not_applicable(self, precision, flags=None, environ=None):
        """Why this CPU (its ``flags`` and oneDNN cap, this machine's by
        default) cannot run the backend in ``precision``, or None."""
        needed = self.get("precision_cpu_level", {}).get(precision)
        reason = needed and cpu_isa.missing(needed, flags, environ)
        if not reason:
            return None
        return "n/a on this CPU ({} on {} {})".format(precision, self["framework"], reason)

    def compile_not_applicable(self, mode):
        """Why the backend has no ``mode`` of compilation, or None."""
        if mode == COMPILE_AUTO or mode in self["compile"]:
            return None
        return "n/a ({}: {})".format(mode, self["compile_note"])

    def compile_settings(self, mode):
        """The backend settings that make ``mode`` (nothing for auto: the
        config's own, measured choice)."""
        if mode == COMPILE_AUTO:
            return {}
        return dict(self["compile"][mode])

    def environment(self, devices, accelerator):
        """The environment a run uses: envs/<backend>.yaml on the CPU (and for
        emulated devices), envs/<backend>.cuda.yaml on GPUs."""
        if devices and accelerator == "gpu" and self["gpu_build"]:
            return self.name + ".cuda"
        return self.name


BACKENDS = MappingProxyType(
    {name: Backend(name, entry) for name, entry in BACKEND_DEFINITIONS.items()}
)


def keras_native_pairs(backends):
    """(Keras backend, native backend) for every native backend whose Keras
    counterpart is also among ``backends``: the cost of abstraction's pairs."""
    found = []
    for backend in backends:
        counterpart = BACKENDS[backend].get("keras")
        if backend.startswith("native-") and counterpart in backends:
            found.append((counterpart, backend))
    return sorted(found)


def backend_of_environment(environment):
    """``keras-torch.cuda`` -> ``keras-torch``."""
    return environment[: -len(".cuda")] if environment.endswith(".cuda") else environment


def source_of(dataset, filename, mirror=None):
    """Where to get one raw file of a built-in dataset: the canonical URL, or
    the same file name under ``mirror`` (a URL base or a local folder) for
    offline clusters."""
    base = mirror or DATASETS[dataset]["base_url"]
    if urlparse(base).scheme in URL_SCHEMES:
        return base.rstrip("/") + "/" + filename
    return os.path.join(os.path.expanduser(base), filename)


# The suffix of a downloaded dataset's stand-in of the same shape and size.
GENERATED_SUFFIX = "_generated"

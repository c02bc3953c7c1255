"""The backends' definitions: for each, its family and framework, the tasks
it runs, how it runs on several devices, and how it makes each precision and
compilation mode (or why it does not). Read through dlbench.catalog.backends."""

TASKS = ("train", "infer")
TASK_WORDS = {"train": "training", "infer": "inference"}

# A backend is a family (which adapter builds and runs the model) and the
# framework underneath. One adapter serves every backend of its family. A
# backend runs the tasks listed; other cells are shown as not applicable.
# ``data_parallel`` says how a run on devices >= 1 is launched (see
# dlbench.run.launch): "one_process" drives every device from one process,
# "process_per_device" starts one process per device (torchrun); ``unsupported``
# gives the reason where there is no data-parallel training. ``gpu_build``: an
# envs/<backend>.cuda.yaml exists for NVIDIA GPUs; ``gpu_only``: why the backend
# has no cell on the CPU (nor an envs/<backend>.yaml). ``environment_setup``: a step
# its environment needs after pip (dlbench.environments.setup_steps.SETUP_STEPS).
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
    # The legacy systems: Keras 2 on Theano, CNTK and MXNet, through the same
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
        # OpenMPI 1.10 for CNTK 2.7, in the environment (setup_steps.SETUP_STEPS)
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
        # OpenMPI 1.10 for CNTK 2.7, in the environment (setup_steps.SETUP_STEPS)
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

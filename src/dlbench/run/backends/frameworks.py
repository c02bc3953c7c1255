"""Framework set-up shared by the Keras and the native adapters: thread
pinning, emulated CPU devices, finding the GPUs a run was given, torch
process groups, peak device memory. Each function takes the framework
module, imported by its caller after the harness pinned the process.
Importable on Python 3.6.
"""

import atexit
import glob
import os
import re
import shlex
import shutil
import sys
import tempfile


def pin_tensorflow(tf, threads, emulated_devices=0):
    """One intra-op pool of ``threads``, one inter-op thread; N logical CPUs
    for emulated devices (before TensorFlow initialises its devices)."""
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    if emulated_devices:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * emulated_devices
        )
    return {"intra_op_threads": threads, "inter_op_threads": 1}


def sweep_autograph_bytecode_at_exit():
    """TensorFlow's autograph writes each function it converts as a module in
    the temporary folder and removes it at exit, but not the bytecode Python
    compiled from it (``__pycache__/__autograph_generated_file*.pyc``: 11
    after one native TensorFlow MLP, 120 after a test session). Registered
    before TensorFlow's own clean-up, so it runs after it: then every such
    file whose module is gone is removed, this process' and any earlier one's."""
    atexit.register(remove_orphaned_autograph_bytecode, tempfile.gettempdir())


def remove_orphaned_autograph_bytecode(folder):
    cache = os.path.join(folder, "__pycache__")
    for path in glob.glob(os.path.join(cache, "__autograph_generated_file*.pyc")):
        module = os.path.basename(path).split(".")[0] + ".py"
        if not os.path.exists(os.path.join(folder, module)):
            try:
                os.remove(path)
            except OSError:  # another process' sweep was first
                pass
    try:
        os.rmdir(cache)  # only when empty
    except OSError:
        pass


def tensorflow_devices(tf, framework, devices, emulated, backend=None):
    """The names of the ``devices`` logical devices a run trains on."""
    kind = "CPU" if emulated else "GPU"
    found = [device.name for device in tf.config.list_logical_devices(kind)]
    if len(found) < devices:
        raise no_gpus(framework, devices, found, backend)
    return found[:devices]


def pin_jax(threads, emulated_devices=0):
    """XLA flags, set before jax is imported. XLA's CPU pool follows the
    process' CPU affinity; one thread needs the flag as well, or Eigen still
    starts its pool. Every flag is a ``--`` flag: XLA stops reading at the
    first token that is not (a TensorFlow option there once hid the device
    count of one-thread runs on emulated devices)."""
    flags = []
    if threads == 1:
        flags.append("--xla_cpu_multi_thread_eigen=false")
    if emulated_devices:
        flags.append("--xla_force_host_platform_device_count={}".format(emulated_devices))
    if flags:
        os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", "")] + flags).strip()
    return {"xla_flags": os.environ.get("XLA_FLAGS", "")}


def jax_devices(jax, framework, devices, emulated, backend=None):
    """The ``devices`` JAX devices a run trains on."""
    platform = "cpu" if emulated else "gpu"
    found = [device for device in jax.devices() if device.platform == platform]
    if len(found) < devices:
        raise no_gpus(framework, devices, jax.devices(), backend)
    return found[:devices]


def gxx_flags(settings):
    """Theano's and PyTensor's ``gcc.cxxflags``: -g0 after their own -g (no
    debug information in the ops they compile, the same machine code; g++
    took 10 % less CPU), then the backend's own ``cxxflags``, last, so that
    they win over the framework's -O3."""
    return " ".join(["-g0"] + settings.get("cxxflags", "").split())


def precompiled_headers_compiler(settings, cache):
    """The g++ Theano and PyTensor call (their ``cxx``) where the backend's
    settings ask for ``precompiled_headers``: a script in their compile
    cache that runs ``dlbench/run/precompiled_headers.py`` (isolated: -I,
    its folder's modules off the path) in front of the machine's g++,
    keeping its headers beside their ops. None otherwise,
    or where there is no g++ (the framework says so itself)."""
    compiler = shutil.which("g++")
    if not settings.get("precompiled_headers") or compiler is None:
        return None
    script = os.path.join(cache, "g++-precompiled-headers")
    wrapper = os.path.join(os.path.dirname(os.path.dirname(__file__)), "precompiled_headers.py")
    text = '#!/bin/sh\nexec {} -I {} --compiler {} --store {} -- "$@"\n'.format(
        *map(shlex.quote, [sys.executable, wrapper, compiler, os.path.join(cache, "headers")])
    )
    if _text_of(script) != text:
        os.makedirs(cache, exist_ok=True)
        written = "{}.{}".format(script, os.getpid())
        with open(written, "w") as handle:
            handle.write(text)
        os.chmod(written, 0o755)
        os.replace(written, script)
    return script


def _text_of(path):
    """A file's text, or None where there is no file."""
    try:
        with open(path) as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def cache_is_warm(folder):
    """Whether a framework's compile cache already holds something (a run
    that finds it so has a shorter first epoch than a fresh machine's)."""
    return os.path.isdir(folder) and bool(os.listdir(folder))


def jax_compilation_cache(enabled):
    """JAX's persistent compilation cache, where the backend's settings ask
    for it (``compilation_cache: true``; off by default, as in JAX, so that
    each run compiles as a fresh process does), kept in the run's environment
    as the other frameworks' compiled code is. Every compile is kept: JAX's
    defaults keep only those over a second, and a weight's random draw is a
    compile of its own for each shape (0.2 s each; 59 for ResNet-50's). Set
    before jax is imported; a JAX_COMPILATION_CACHE_DIR of the user's own is
    kept, and reported, whatever the setting. What the record says: where the
    cache is (None: off), and whether this run found it warm (a shorter first
    epoch, and fewer compiles, than a fresh machine's)."""
    if enabled:
        os.environ.setdefault(
            "JAX_COMPILATION_CACHE_DIR", os.path.join(sys.prefix, "jax-compilation-cache")
        )
        os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
        os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "-1")
    cache = os.environ.get("JAX_COMPILATION_CACHE_DIR") or None
    return {
        "jax_compilation_cache": cache,
        "compile_cache_warm": bool(cache) and cache_is_warm(cache),
    }


def torch_compile_cache():
    """torch.compile's cache (Inductor's generated kernels and graphs) kept in
    the run's environment, as PyTensor's and Theano's compiled ops are: by
    default it is /tmp/torchinductor_<user>, which any earlier run on the
    machine, of any environment, may have warmed. Set before torch is
    imported; a TORCHINDUCTOR_CACHE_DIR of the user's own is kept. What the
    record says: where it is, and whether this run found it warm (a shorter
    first epoch than a fresh machine's)."""
    cache = os.environ.setdefault(
        "TORCHINDUCTOR_CACHE_DIR", os.path.join(sys.prefix, "torchinductor-cache")
    )
    return {
        "torch_compile_cache": cache,
        "compile_cache_warm": cache_is_warm(cache),
    }


def torch_precompiled_headers():
    """Where Inductor precompiles the headers of its C++ kernels: PyTorch
    keeps them in /tmp/torchinductor_<user>/precompiled_headers whatever
    TORCHINDUCTOR_CACHE_DIR says, so a header that any earlier run on the
    machine compiled shortened this run's first compile unseen (a small
    function's cold compile: 31 s, 23 to 25 s with the header warm; torch
    2.13 on a 2-core Xeon). Moved into the compile cache beside the rest,
    where ``torch_compile_cache`` sees it; call before the first compile.
    A torch without that folder (older releases) is left as it is."""
    from torch._inductor import codecache

    if not hasattr(codecache, "_HEADER_DIR"):
        return {}
    folder = os.path.join(os.environ["TORCHINDUCTOR_CACHE_DIR"], "precompiled_headers")
    codecache._HEADER_DIR = folder
    codecache._HEADER_LOCK_DIR = os.path.join(folder, "locks")
    return {"torch_precompiled_headers": folder}


def torch_compile_shapes():
    """How this process's torch.compile treats a second input shape (the
    throughput batch after the batch-1 latency, an epoch's last, smaller
    batch): by default it compiles again with the sizes that changed made
    dynamic, and that graph then serves every shape it admits;
    TORCH_DYNAMO_AUTOMATIC_DYNAMIC_SHAPES=0 gives each shape its own
    static graph instead."""
    from torch._dynamo import config

    if config.automatic_dynamic_shapes:
        return "a new shape compiles again with dynamic sizes (torch's default)"
    return "each shape its own static graph (automatic_dynamic_shapes off)"


def pin_torch(torch, threads):
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    # Denormal numbers slow torch's CPU kernels many times over; TensorFlow
    # and XLA flush them by default.
    torch.set_flush_denormal(True)
    return {"intra_op_threads": threads, "inter_op_threads": 1, "flush_denormal": True}


def no_gpus(framework, devices, seen, backend=None):
    return RuntimeError(
        "devices={} asks for {} GPUs; {} sees {}. The run needs the CUDA build "
        "(envs/{}.cuda.yaml) and visible GPUs (CUDA_VISIBLE_DEVICES={!r})".format(
            devices,
            devices,
            framework,
            seen or "none",
            backend or "keras-" + framework,
            os.environ.get("CUDA_VISIBLE_DEVICES"),
        )
    )


def torch_process_group(torch, parallel, devices, backend=None):
    """Join torchrun's process group: NCCL on GPUs (this process' GPU is its
    local rank), gloo on emulated CPU devices. Returns the group's backend."""
    import torch.distributed as dist

    emulated = parallel["accelerator"] == "emulated-cpu"
    if not emulated:
        if torch.cuda.device_count() < 1:
            raise no_gpus("torch", devices, [], backend)
        torch.cuda.set_device(parallel["local_rank"])
    group = "gloo" if emulated else "nccl"
    dist.init_process_group(backend=group)
    if dist.get_world_size() != devices:
        raise RuntimeError(
            "devices={} but torchrun started {} processes".format(devices, dist.get_world_size())
        )
    return group


def leave_process_group():
    """Destroy torchrun's process group and free its threads while the
    interpreter is whole. The DistributedDataParallel wrapper sits in a
    reference cycle with the model (the train step's closure), so it keeps
    the group and its gloo threads alive after ``destroy_process_group``
    until a garbage collection; left to interpreter shutdown, those threads
    abort the process now and then ("terminate called without an active
    exception", SIGABRT or SIGSEGV in 5 to 10 % of runs here)."""
    import gc

    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()
    gc.collect()


def mean_over_processes(values):
    """The mean of each value over the process group."""
    import torch
    import torch.distributed as dist

    tensor = torch.tensor([float(v) for v in values], dtype=torch.float64)
    tensor = tensor.to(_collective_device())
    dist.all_reduce(tensor)
    return (tensor / dist.get_world_size()).tolist()


def _collective_device():
    """NCCL reduces GPU tensors only; gloo CPU tensors."""
    import torch
    import torch.distributed as dist

    return torch.device("cuda" if dist.get_backend() == "nccl" else "cpu")


def divergence_over_processes(parameters):
    """The largest difference between any parameter on two processes."""
    import torch
    import torch.distributed as dist

    mine = torch.cat([p.detach().reshape(-1) for p in parameters])
    mine = mine.to(_collective_device())
    first = mine.clone()
    dist.broadcast(first, src=0)
    largest = (mine - first).abs().max() if mine.numel() else torch.tensor(0.0)
    largest = largest.reshape(1).to(torch.float64)
    dist.all_reduce(largest, op=dist.ReduceOp.MAX)
    return float(largest.item())


def largest_difference(copies):
    """The largest absolute difference between arrays that should be equal."""
    import numpy

    copies = [numpy.asarray(copy) for copy in copies]
    return max(
        [float(numpy.max(numpy.abs(copy - copies[0]), initial=0)) for copy in copies[1:]] or [0.0]
    )


def peak_memory_torch():
    import torch

    return torch.cuda.max_memory_allocated() / 2.0**20


def peak_memory_tensorflow():
    import tensorflow as tf

    return tf.config.experimental.get_memory_info("GPU:0")["peak"] / 2.0**20


def peak_memory_jax():
    import jax

    stats = jax.devices()[0].memory_stats() or {}
    peak = stats.get("peak_bytes_in_use")
    return None if peak is None else peak / 2.0**20


PEAK_MEMORY = {
    "torch": peak_memory_torch,
    "tensorflow": peak_memory_tensorflow,
    "jax": peak_memory_jax,
}


RECURRENT_OPS = re.compile(r"rnn|gru|lstm", re.IGNORECASE)


def torch_recurrent_ops(torch, call):
    """The recurrent operators and GPU kernels that ``call`` ran, as
    torch.profiler saw them (aten::_cudnn_rnn where cuDNN took the layer),
    and whether any was cuDNN's."""
    from torch.profiler import ProfilerActivity, profile

    on_gpu = torch.cuda.is_available()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    with profile(activities=activities) as profiled:
        call()
        if on_gpu:
            torch.cuda.synchronize()
    names = {event.key for event in profiled.key_averages()}
    seen = sorted(name for name in names if RECURRENT_OPS.search(name))
    return {
        "seen": seen,
        "cudnn": any("cudnn" in name.lower() for name in seen),
        "how": "torch.profiler over one predict call after training",
    }

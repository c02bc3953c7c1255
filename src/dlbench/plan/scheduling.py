"""What a machine that runs its own jobs provides of the resources the rules
ask for, where the command line leaves them out.

Snakemake's ``--resources`` replaces the profile's whole list, so asking for
GPUs there (``--resources gpu=4``) would drop ``cpu_exclusive`` and the
compile caches' units: CPU-timed runs would then share the CPU. The
workflow adds back what is missing, and the GPUs the machine has.
"""

# profiles/default/config.yaml provides the same (a unit test holds them
# together): a CPU-timed run takes both units of cpu_exclusive, a set-up job
# one; one job at a time fills each compile cache.
LOCAL_RESOURCES = {"cpu_exclusive": 2, "theano_compile_cache": 1, "pytensor_compile_cache": 1}


def missing_resources(given, gpus):
    """{name: amount} of the local resources that ``given`` (the names that
    --resources or the profile set) lacks; ``gpu`` as the machine's count
    where it has GPUs and nothing names them."""
    missing = {name: amount for name, amount in LOCAL_RESOURCES.items() if name not in given}
    if gpus and "gpu" not in given:
        missing["gpu"] = gpus
    return missing

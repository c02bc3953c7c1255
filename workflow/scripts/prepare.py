"""Write one normalised array file per dataset (rule prepare)."""

import sys

from dlbench.data.own_datasets import DataRefused
from dlbench.data.own_preparation import prepare as prepare_own
from dlbench.data.preparation import prepare
from dlbench.data.unfetched import unfetched_reason
from dlbench.plan import config_registry
from dlbench.run import integrity, run_data

terminal = sys.stderr
sys.stderr = sys.stdout = open(snakemake.log[0], "w")
dataset = snakemake.wildcards.dataset
registry = config_registry.registry_of(snakemake.config)  # the config's own datasets too
if registry.is_own(dataset):
    try:
        prepare_own(dataset, snakemake.params.definition, snakemake.output[0])
    except DataRefused as error:  # its cells are invalid with the reason; the rest runs on
        run_data.write_unavailable(snakemake.output[0], error, refused=True)
        print(error)
        print("dataset {} refused: {}".format(dataset, error), file=terminal)
else:
    raw_files = {name: path for name, path in snakemake.input.items() if name != "code"}
    unfetched = [reason for reason in map(unfetched_reason, raw_files.values()) if reason]
    if unfetched:  # the dataset's cells say why; nothing else waits on it
        reason = "could not fetch {} (to try again: --config retry_downloads=true)".format(
            "; ".join(unfetched)
        )
        run_data.write_unavailable(snakemake.output[0], reason)
        print(reason)
    else:
        print(prepare(dataset, raw_files, snakemake.output[0], registry.datasets[dataset]))
integrity.seal(snakemake.output[0])  # checked before every later use

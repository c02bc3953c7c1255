"""Write one normalised array file per dataset (rule prepare)."""

import sys

from dlbench.data.preparation import prepare
from dlbench.data.unfetched import unfetched_reason
from dlbench.registry import Registry
from dlbench.run import integrity, run_data

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
raw_files = {name: path for name, path in snakemake.input.items() if name != "code"}
unfetched = [reason for reason in map(unfetched_reason, raw_files.values()) if reason]
if unfetched:  # the dataset's cells say why; nothing else waits on it
    reason = "could not fetch {} (to try again: --config retry_downloads=true)".format(
        "; ".join(unfetched)
    )
    run_data.write_unavailable(snakemake.output[0], reason)
    print(reason)
else:
    dataset = snakemake.wildcards.dataset  # the config's synthetic datasets are the registry's
    entry = Registry.of_config(snakemake.config).datasets[dataset]
    print(prepare(dataset, raw_files, snakemake.output[0], entry))
integrity.seal(snakemake.output[0])  # checked before every later use

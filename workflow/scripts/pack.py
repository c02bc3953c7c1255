"""This machine's run records, per-epoch tables and logs -> one archive to
carry to another machine (rule pack); no data, no environments."""

import sys
import tarfile
from pathlib import Path

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
runs = Path("results/runs")
with tarfile.open(snakemake.output[0], "w:gz") as packed:
    for record in snakemake.input:
        for name in ("run.json", "epochs.csv", "bench.log"):
            path = Path(record).with_name(name)
            if path.exists():
                packed.add(path, arcname=str(path.relative_to(runs)))
print("packed {} runs into {}".format(len(snakemake.input), snakemake.output[0]))

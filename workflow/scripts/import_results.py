"""Other machines' results -> their checked records and a verdict on every
record found (rule import_results)."""

import json
import sys

import pandas as pd

from dlbench.analysis import imported_results

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
accepted, verdicts = imported_results.import_records(
    snakemake.params.sources, snakemake.params.machine
)
with open(snakemake.output.records, "w") as handle:
    json.dump(accepted, handle)
pd.DataFrame(verdicts, columns=["record", "machine", "accepted", "reason"]).to_csv(
    snakemake.output.verdicts, index=False
)
for verdict in verdicts:
    if not verdict["accepted"]:
        print("refused {record}: {reason}".format(**verdict))
print("{} records used, {} refused".format(len(accepted), len(verdicts) - len(accepted)))

"""SHA-256 of every library file a backend family's runs execute (rule code_digest)."""

import hashlib
import sys

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
with open(snakemake.output[0], "w") as digest:
    for path in snakemake.input:
        with open(path, "rb") as source:
            digest.write("{}  {}\n".format(hashlib.sha256(source.read()).hexdigest(), path))

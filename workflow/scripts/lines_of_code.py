"""The library's source -> lines of code per implementation (rule lines_of_code)."""

import sys

from dlbench import lines

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
table = lines.table(snakemake.params.implementations)
table.to_csv(snakemake.output.csv, index=False)
with open(snakemake.output.markdown, "w") as handle:
    handle.write("### Lines of code per implementation\n\n")
    handle.write(lines.wide(table).to_markdown(index=False, missingval="–"))
    handle.write("\n\n{}\n".format(lines.CAPTION))
print(table.to_string())

"""The README's picture: the relative-speed heat-map of the H200 records kept
in records/gpu (make readme-picture)."""

from pathlib import Path

from dlbench.analysis import collect, plots_heat_maps

RECORDS = Path("records/gpu/runs")
PICTURE = Path("docs/images/relative-speed-h200.png")

if __name__ == "__main__":
    records = collect.load_records(sorted(RECORDS.rglob("run.json")))
    plots_heat_maps.relative_speed(collect.summary(collect.metrics(records)), str(PICTURE))
    print(PICTURE)

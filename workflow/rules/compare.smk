rule abstraction_cost:
    input:
        metrics="results/metrics.csv",
        epochs="results/epochs.csv",
        latencies="results/latencies.csv",
    output:
        csv=report(
            "results/tables/abstraction_cost.csv",
            caption="../report/abstraction_cost.rst",
            category="Keras vs native",
            labels={"figure": "abstraction cost table (CSV)"},
        ),
        html=report(
            "results/tables/abstraction_cost.html",
            caption="../report/abstraction_cost.rst",
            category="Keras vs native",
            labels={"figure": "abstraction cost table"},
        ),
        markdown="results/tables/abstraction_cost.md",
    log:
        "logs/tables/abstraction_cost.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/abstraction_cost.py"


rule speedups:
    input:
        metrics="results/metrics.csv",
        epochs="results/epochs.csv",
        latencies="results/latencies.csv",
    output:
        csv=report(
            "results/tables/speedups.csv",
            caption="../report/speedups.rst",
            category="Precision and compilation",
            labels={"figure": "speed-ups table (CSV)"},
        ),
        html=report(
            "results/tables/speedups.html",
            caption="../report/speedups.rst",
            category="Precision and compilation",
            labels={"figure": "speed-ups table"},
        ),
        markdown="results/tables/speedups.md",
    log:
        "logs/tables/speedups.log",
    conda:
        MAIN_ENV
    params:
        accuracy_tolerance=config["accuracy_tolerance"],
    script:
        "../scripts/speedups.py"


rule lines_of_code:
    input:
        targets.implementation_sources(),
    output:
        csv=report(
            "results/tables/lines_of_code.csv",
            caption="../report/lines_of_code.rst",
            category="Keras vs native",
            labels={"figure": "lines of code table (CSV)"},
        ),
        html=report(
            "results/tables/lines_of_code.html",
            caption="../report/lines_of_code.rst",
            category="Keras vs native",
            labels={"figure": "lines of code table"},
        ),
        markdown="results/tables/lines_of_code.md",
    log:
        "logs/tables/lines_of_code.log",
    conda:
        MAIN_ENV
    params:
        implementations=targets.implementations(),
    script:
        "../scripts/lines_of_code.py"


rule plot_abstraction_cost:
    input:
        "results/tables/abstraction_cost.csv",
    output:
        report(
            "results/plots/abstraction_cost.png",
            caption="../report/abstraction_cost.rst",
            category="Keras vs native",
            labels={"figure": "abstraction cost"},
        ),
    log:
        "logs/plots/abstraction_cost.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/plot_comparison.py"


rule plot_speedups:
    input:
        "results/tables/speedups.csv",
    output:
        report(
            "results/plots/speedups.png",
            caption="../report/speedups.rst",
            category="Precision and compilation",
            labels={"figure": "speed-ups"},
        ),
    log:
        "logs/plots/speedups.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/plot_comparison.py"


rule plot_lines_of_code:
    input:
        "results/tables/lines_of_code.csv",
    output:
        report(
            "results/plots/lines_of_code.png",
            caption="../report/lines_of_code.rst",
            category="Keras vs native",
            labels={"figure": "lines of code"},
        ),
    log:
        "logs/plots/lines_of_code.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/plot_comparison.py"


rule published_comparison:
    input:
        published="workflow/resources/published_results.csv",
        hardware="workflow/resources/published_hardware.csv",
        peaks="workflow/resources/gpu_peaks.csv",
        summary="results/summary.csv",
        metrics="results/metrics.csv",
        # its peak_gflops (rule utilisation): our GPUs' peak, to scale the published figures to
        utilisation="results/tables/utilisation.csv",
    output:
        csv=report(
            "results/tables/published_comparison.csv",
            caption="../report/published.rst",
            category="Published figures",
            labels={"figure": "published and ours, table (CSV)"},
        ),
        html=report(
            "results/tables/published_comparison.html",
            caption="../report/published.rst",
            category="Published figures",
            labels={"figure": "published and ours, table"},
        ),
        markdown="results/tables/published_comparison.md",
    log:
        "logs/tables/published_comparison.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/published_comparison.py"


rule plot_published:
    input:
        "results/tables/published_comparison.csv",
    output:
        report(
            "results/plots/published_comparison.png",
            caption="../report/published.rst",
            category="Published figures",
            labels={"figure": "published and ours, rankings"},
        ),
    log:
        "logs/plots/published_comparison.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/plot_overview.py"


rule versions_table:
    input:
        metrics="results/metrics.csv",
        epochs="results/epochs.csv",
        latencies="results/latencies.csv",
        checks=targets.check_records(),
        environments=sorted(targets.versions_environments().values()),
        imported="results/imported/records.json",
        ops=targets.ops_table(),
    output:
        # in the report where the config names versions (with imported
        # records alone the table may be empty)
        csv=(
            report(
                "results/tables/versions.csv",
                caption="../report/versions.rst",
                category="Versions",
                labels={"figure": "versions table (CSV)"},
            )
            if comparisons.versions_configured(config)
            else "results/tables/versions.csv"
        ),
        html=(
            report(
                "results/tables/versions.html",
                caption="../report/versions.rst",
                category="Versions",
                labels={"figure": "versions table"},
            )
            if comparisons.versions_configured(config)
            else "results/tables/versions.html"
        ),
        markdown="results/tables/versions.md",
    log:
        "logs/tables/versions.log",
    conda:
        MAIN_ENV
    params:
        environments=targets.versions_environments(),
        machine=targets.machine,
        tolerance=config["equivalence_check"].get("tolerance", 2.0e-4),
        factor=config["release_factor"],
        alpha=config["significance_level"],
    script:
        "../scripts/versions_table.py"


rule plot_versions:
    input:
        "results/tables/versions.csv",
    output:
        (
            report(
                "results/plots/versions.png",
                caption="../report/versions.rst",
                category="Versions",
                labels={"figure": "versions"},
            )
            if comparisons.versions_configured(config)
            else "results/plots/versions.png"
        ),
    log:
        "logs/plots/versions.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/plot_comparison.py"


rule version_history:
    input:
        metrics="results/metrics.csv",
        epochs="results/epochs.csv",
        latencies="results/latencies.csv",
    output:
        csv="results/tables/version_history.csv",
        # in the report where the config runs a backend on three releases or more
        html=(
            report(
                "results/tables/version_history.html",
                caption="../report/versions.rst",
                category="Versions",
                labels={"figure": "history of the releases"},
            )
            if comparisons.series_configured(config)
            else "results/tables/version_history.html"
        ),
        markdown="results/tables/version_history.md",
    log:
        "logs/tables/version_history.log",
    conda:
        MAIN_ENV
    params:
        factor=config["release_factor"],
        alpha=config["significance_level"],
    script:
        "../scripts/version_history.py"


rule plot_version_history:
    input:
        "results/tables/version_history.csv",
    output:
        (
            report(
                "results/plots/version_history.png",
                caption="../report/versions.rst",
                category="Versions",
                labels={"figure": "releases in a series"},
            )
            if comparisons.series_configured(config)
            else "results/plots/version_history.png"
        ),
    log:
        "logs/plots/version_history.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/plot_comparison.py"


# This file's targets (rule all): the comparisons the config's backends,
# modes and versions make.
TARGETS += [
    rules.lines_of_code.output.markdown,
    *rules.plot_lines_of_code.output,
    rules.published_comparison.output.markdown,
    *rules.plot_published.output,
]
if comparisons.versions_compared(config):
    TARGETS += [rules.versions_table.output.markdown, *rules.plot_versions.output]
    TARGETS += [
        rules.version_history.output.markdown,
        *rules.plot_version_history.output,
    ]
if comparisons.modes_compared(config):
    TARGETS += [rules.speedups.output.markdown, *rules.plot_speedups.output]
if catalog.keras_native_pairs(set(config["backends"])):
    TARGETS += [
        rules.abstraction_cost.output.markdown,
        *rules.plot_abstraction_cost.output,
    ]

rule import_results:
    input:
        targets.import_sources(),
    output:
        records="results/imported/records.json",
        # in the report only where there was something to import
        verdicts=(
            report(
                "results/tables/imports.csv",
                caption="../report/imports.rst",
                category="Machines",
                labels={"figure": "imported records"},
            )
            if config["import_results"]
            else "results/tables/imports.csv"
        ),
    log:
        "logs/import_results.log",
    conda:
        MAIN_ENV
    params:
        sources=config["import_results"],
        machine=targets.machine,
        fingerprint=targets.import_fingerprint(),
    script:
        "../scripts/import_results.py"


rule pack:
    input:
        targets.run_records(),
    output:
        f"{paths.MACHINE_PACKS_DIR}/{targets.machine}.tar.gz",
    log:
        f"logs/pack/{targets.machine}.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/pack.py"


rule machine_comparison:
    input:
        "results/summary.csv",
    output:
        csv=report(
            "results/tables/machines.csv",
            caption="../report/machines.rst",
            category="Machines",
            labels={"figure": "backends across machines (CSV)"},
        ),
        html=report(
            "results/tables/machines.html",
            caption="../report/machines.rst",
            category="Machines",
            labels={"figure": "backends across machines"},
        ),
        markdown="results/tables/machines.md",
        plot=report(
            "results/plots/machines.png",
            caption="../report/machines.rst",
            category="Machines",
            labels={"figure": "backends across machines (plot)"},
        ),
    log:
        "logs/tables/machines.log",
    conda:
        MAIN_ENV
    params:
        machines=[targets.machine],  # this machine first, imported ones as they come
        reference_machine=config["reference_machine"],
    script:
        "../scripts/machine_comparison.py"


rule machine_interaction:
    input:
        "results/metrics.csv",
    output:
        csv=report(
            "results/tables/machine_interaction.csv",
            caption="../report/machines.rst",
            category="Machines",
            labels={"figure": "ranking across machines, test (CSV)"},
        ),
        html=report(
            "results/tables/machine_interaction.html",
            caption="../report/machines.rst",
            category="Machines",
            labels={"figure": "ranking across machines, test"},
        ),
        markdown="results/tables/machine_interaction.md",
    log:
        "logs/tables/machine_interaction.log",
    conda:
        MAIN_ENV
    params:
        significance_level=config["significance_level"],
    script:
        "../scripts/machine_comparison.py"


# This file's targets (rule all): the comparison of the machines.
TARGETS += [
    rules.machine_comparison.output.markdown,
    rules.machine_interaction.output.markdown,
]

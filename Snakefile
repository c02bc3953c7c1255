# Benchmark of Keras backends and native frameworks: data -> runs -> tables,
# plots and report. The matrix lives in the config: config/config.yaml, or the
# files --configfile names instead (workflow/rules/common.smk reads them).


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/envs.smk"
include: "workflow/rules/bench.smk"
include: "workflow/rules/equivalence.smk"
include: "workflow/rules/collect.smk"
include: "workflow/rules/plots.smk"
include: "workflow/rules/time_to_accuracy.smk"
include: "workflow/rules/compare.smk"
include: "workflow/rules/overview.smk"
include: "workflow/rules/op_profile.smk"
include: "workflow/rules/python_stacks.smk"
include: "workflow/rules/machines.smk"


report: "workflow/report/workflow.rst"


rule all:
    default_target: True
    input:
        TARGETS,

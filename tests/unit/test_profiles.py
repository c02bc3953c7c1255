"""The profiles' settings that Snakemake itself reads: each parses with
Snakemake's own parser, and the rate limit keeps Snakemake's default rate
over a longer span (profiles/default/config.yaml says why)."""

import pytest
import yaml
from snakemake.settings.types import MaxJobsPerTimespan

from testkit import QUICK_EXIT, REPO

SNAKEMAKE_DEFAULT = MaxJobsPerTimespan.parse_choice("100/1s")


@pytest.mark.parametrize("profile", ["default", "slurm"])
def test_the_rate_limit_is_snakemakes_rate_over_a_longer_span(profile):
    with open(REPO / "profiles" / profile / "config.yaml") as handle:
        setting = yaml.safe_load(handle)["max-jobs-per-timespan"]
    limit = MaxJobsPerTimespan.parse_choice(setting)
    assert limit.timespan > SNAKEMAKE_DEFAULT.timespan
    rate = limit.max_jobs / limit.timespan
    assert rate == SNAKEMAKE_DEFAULT.max_jobs / SNAKEMAKE_DEFAULT.timespan


def test_the_tests_short_invocations_keep_snakemakes_own_span():
    option, value = QUICK_EXIT
    assert option == "--max-jobs-per-timespan"
    assert MaxJobsPerTimespan.parse_choice(value).timespan == SNAKEMAKE_DEFAULT.timespan

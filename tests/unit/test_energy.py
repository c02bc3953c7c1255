"""Energy of the timed windows (dlbench.run.energy): RAPL counters read from a
powercap tree as the kernel lays it out, wrap-around included; NVML where
there is a GPU, its absence said."""

import pytest

from dlbench.run import energy


def rapl_tree(root, packages):
    """intel-rapl:<n> package domains (with a core sub-domain, not counted)."""
    for number, (microjoules, wrap) in enumerate(packages):
        domain = root / "intel-rapl:{}".format(number)
        (domain / "intel-rapl:{}:0".format(number)).mkdir(parents=True)
        (domain / "energy_uj").write_text("{}\n".format(microjoules))
        (domain / "max_energy_range_uj").write_text("{}\n".format(wrap))
        (domain / "intel-rapl:{}:0".format(number) / "energy_uj").write_text("5\n")
    return root


def set_counter(root, number, microjoules):
    (root / "intel-rapl:{}".format(number) / "energy_uj").write_text(str(microjoules))


def test_cpu_energy_sums_the_packages_and_survives_a_wrap(tmp_path):
    root = rapl_tree(tmp_path, [(1_000_000, 10_000_000), (9_500_000, 10_000_000)])
    meter = energy.Meter(rapl_root=str(root))
    assert meter.sources()["cpu"] == "RAPL, every CPU package"
    before = meter.read()
    set_counter(root, 0, 3_500_000)  # +2.5 J
    set_counter(root, 1, 500_000)  # wrapped: +1.0 J
    found = meter.joules(before, meter.read())
    assert found == {"gpu": None, "cpu": pytest.approx(3.5)}


def test_a_machine_without_counters_says_why(tmp_path):
    meter = energy.Meter(gpu_ids=[], rapl_root=str(tmp_path / "none"))
    sources = meter.sources()
    assert sources["gpu"] is None and sources["gpu_not_measured"] == "no GPU in this run"
    assert sources["cpu_not_measured"].startswith("no readable RAPL counter")
    reading = meter.read()
    assert meter.joules(reading, meter.read()) == {"gpu": None, "cpu": None}
    block = energy.per_epoch(meter, [{"gpu": None, "cpu": None}], 100)
    assert "gpu_joules_per_epoch" not in block and block["cpu"] is None
    on_a_gpu = energy.Meter(gpu_ids=["0"], rapl_root=str(tmp_path / "none"))
    reason = on_a_gpu.sources()["gpu_not_measured"]  # no nvidia-ml-py here, or no driver
    assert reason.startswith(("no NVML here", "NVML has no energy counter here"))


def test_the_record_gives_a_steady_epochs_energy_and_per_sample(tmp_path):
    meter = energy.Meter(rapl_root=str(rapl_tree(tmp_path, [(0, 10**9)])))
    epochs = [{"gpu": None, "cpu": joules} for joules in (9.0, 2.0, 4.0, 3.0)]
    block = energy.per_epoch(meter, epochs, 1000, seconds=[3.0, 1.0, 2.0, 1.5])
    assert block["cpu_joules_per_epoch"] == [9.0, 2.0, 4.0, 3.0]
    assert block["cpu_joules_steady_epoch"] == 3.0  # the later epochs' together, over 3
    assert block["cpu_joules_per_sample"] == pytest.approx(0.003)
    assert block["cpu_watts_steady"] == pytest.approx(9.0 / 4.5)
    # an epoch that compiled again is left out with its time
    again = energy.per_epoch(meter, epochs, 1000, [3.0, 1.0, 2.0, 1.5], steady_epochs=[3, 4])
    assert again["cpu_joules_steady_epoch"] == 3.5
    inference = energy.per_samples(meter, {"gpu": None, "cpu": 0.5}, 250)
    assert inference["cpu_joules_per_1000_samples"] == pytest.approx(2.0)


def test_gpu_energy_of_a_span_shorter_than_the_counters_steps_is_not_a_number(tmp_path):
    # An H200's NVML counter (the GPU campaign): epochs of 0.01-0.05 s read 0 J or a 13 J step
    meter = energy.Meter(rapl_root=str(tmp_path / "none"))
    epochs = [{"gpu": joules, "cpu": None} for joules in (880.5, 0.0, 13.6)]
    block = energy.per_epoch(meter, epochs, 512, seconds=[6.6, 0.027, 0.026])
    assert block["gpu_joules_per_epoch"] == [880.5, 0.0, 13.6]  # kept as read
    assert "gpu_joules_steady_epoch" not in block
    assert "0.053 s, under 1.0 s" in block["gpu_steady_not_measured"]
    long_enough = energy.per_epoch(meter, epochs, 512, seconds=[6.6, 0.6, 0.6])
    assert long_enough["gpu_joules_steady_epoch"] == pytest.approx(6.8)
    assert long_enough["gpu_watts_steady"] == pytest.approx(13.6 / 1.2)
    inference = energy.per_samples(meter, {"gpu": 24.0, "cpu": None}, 160, seconds=0.055)
    assert "gpu_joules_per_1000_samples" not in inference
    assert "under 1.0 s" in inference["gpu_steady_not_measured"]


def test_the_metrics_carry_each_runs_energy():
    from dlbench.analysis import collect
    from testkit import fixture_record

    measured = {"gpu": "NVML", "gpu_joules_steady_epoch": 12.5, "gpu_joules_per_sample": 0.01}
    records = [fixture_record("train_ok", energy=measured), fixture_record("infer_ok")]
    metrics = collect.metrics(records).set_index("task")
    assert metrics.loc["train", "gpu_joules_steady_epoch"] == 12.5
    assert metrics.loc["train", "gpu_joules_per_sample"] == 0.01
    assert metrics[["cpu_joules_per_sample", "gpu_joules_per_1000_samples"]].isna().all().all()

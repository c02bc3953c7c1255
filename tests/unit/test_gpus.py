"""GPU allocation for concurrent local runs, on a fake list of GPU ids."""

import json
import signal
import subprocess
import sys
import time

import pytest

from dlbench.host import gpus
from testkit import REPO

HOLDER = """
import json, sys, time
from dlbench.host import gpus
count, pool, lock_dir, hold, out = sys.argv[1:]
pool = pool.split(",")
with gpus.allocate(int(count), pool, lock_dir, timeout_s=60, poll_s=0.05) as allocation:
    start = time.time()
    print("held", flush=True)
    time.sleep(float(hold))
    span = {"ids": allocation.ids, "start": start, "end": time.time()}
    with open(out, "a") as handle:
        handle.write(json.dumps(span) + "\\n")
"""


def start_holder(tmp_path, count, pool, hold, name):
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(count), ",".join(pool), str(tmp_path / "locks")]
        + [str(hold), str(tmp_path / "{}.jsonl".format(name))],
        cwd=str(REPO / "src"),
        stdout=subprocess.PIPE,
        text=True,
    )


def test_concurrent_runs_get_distinct_gpus(tmp_path):
    """Six runs of one GPU each on a 2-GPU pool: never two on one GPU at a
    time, and both GPUs in use."""
    holders = [start_holder(tmp_path, 1, ["0", "1"], 0.4, "runs") for _ in range(6)]
    for holder in holders:
        assert holder.wait(timeout=60) == 0
    spans = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert len(spans) == 6 and {span["ids"][0] for span in spans} == {"0", "1"}
    for gpu in ("0", "1"):
        mine = sorted((s["start"], s["end"]) for s in spans if s["ids"] == [gpu])
        for (_, end), (start, _) in zip(mine, mine[1:]):
            assert end <= start


def test_a_multi_gpu_run_takes_its_whole_set(tmp_path):
    with gpus.allocate(2, ["0", "1", "2"], str(tmp_path)) as first:
        assert len(set(first.ids)) == 2
        assert first.environment() == {"CUDA_VISIBLE_DEVICES": ",".join(first.ids)}
        with pytest.raises(gpus.GPUsUnavailable, match="no 2 of GPUs"):
            gpus.allocate(2, ["0", "1", "2"], str(tmp_path), timeout_s=0.2, poll_s=0.05)
        with gpus.allocate(1, ["0", "1", "2"], str(tmp_path)) as second:
            assert second.ids[0] not in first.ids
    with gpus.allocate(3, ["0", "1", "2"], str(tmp_path), timeout_s=0) as everything:
        assert sorted(everything.ids) == ["0", "1", "2"]


def test_a_killed_run_frees_its_gpu(tmp_path):
    holder = start_holder(tmp_path, 1, ["7"], 60, "killed")
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(gpus.GPUsUnavailable):
        gpus.allocate(1, ["7"], str(tmp_path / "locks"), timeout_s=0.2, poll_s=0.05)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    started = time.monotonic()
    with gpus.allocate(1, ["7"], str(tmp_path / "locks"), timeout_s=10, poll_s=0.05) as after:
        assert after.ids == ["7"] and time.monotonic() - started < 5


def test_asking_for_more_gpus_than_exist_is_a_clear_error(tmp_path):
    with pytest.raises(gpus.GPUsUnavailable, match="asks for 4 GPUs; only 2 are visible"):
        gpus.allocate(4, ["0", "1"], str(tmp_path))


def test_visible_gpus_follow_cuda_visible_devices():
    assert gpus.visible_gpus({"CUDA_VISIBLE_DEVICES": "2,3"}) == ["2", "3"]
    assert gpus.visible_gpus({"CUDA_VISIBLE_DEVICES": ""}) == []

"""FLOPs per sample counted by PyTorch itself, to check dlbench.models.flops.

Runs in a native-torch environment: ``python tests/e2e/flops_check.py <model>
'<dims json>'`` prints {"forward": n, "training": n, "counter": "..."}.

The counter is torch.utils.flop_counter.FlopCounterMode, which counts the
matrix products (mm, addmm, bmm, convolutions and their backward) that
torch dispatches: the convention of dlbench.models.flops. It runs over the native
torch model (dlbench/models/workloads/<model>/in_torch.py), built from the same dims
(flops.spec_of), on the CPU with a batch of ``BATCH`` random samples:
``forward`` is one forward pass, ``training`` a forward pass, the
cross-entropy loss and ``loss.backward()`` (no optimizer step). Every
workload of BUILT_IN.models is checked this way.

torch's CPU LSTM and GRU run as one oneDNN (mkldnn) kernel that the counter
cannot see. With oneDNN disabled, torch runs the same recurrence as linear
ops (the input projection of all steps at once, the state matmul step by
step), which it counts; the recurrent workloads (hrnn, imdb_gru, babi_rnn)
are therefore counted with oneDNN off, the others are unaffected by it.
"""

import contextlib
import json
import sys

from dlbench.models import flops
from dlbench.registry import BUILT_IN
from dlbench.run.flops_count import BATCH, per_sample


@contextlib.contextmanager
def _without_onednn(torch):
    # torch.backends.mkldnn.flags() would also set TF32 (and warn about it).
    enabled = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = enabled


def _batch(torch, model, spec):
    """Random inputs of the model's shapes (images channels-first, word ids
    int64) and random labels."""
    generator = torch.Generator().manual_seed(0)
    kind = BUILT_IN.models[model]["inputs"][0]
    if kind == "story_question":
        inputs = {
            name: torch.randint(1, spec["vocabulary"], (BATCH, spec[length]), generator=generator)
            for name, length in (("story", "story_length"), ("question", "query_length"))
        }
    elif kind == "words150":
        shape = (BATCH,) + tuple(spec["input_shape"])
        inputs = torch.randint(1, spec["vocabulary"], shape, generator=generator)
    else:
        height, width, channels = spec["input_shape"]
        inputs = torch.rand((BATCH, channels, height, width), generator=generator)
    labels = torch.randint(0, spec.get("classes", 1), (BATCH,), generator=generator)
    return inputs, labels


def count(model, dims):
    """FLOPs per sample of ``model`` on ``dims``, as FlopCounterMode counts them."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    spec = flops.spec_of(model, dims)
    net = BUILT_IN.builder(model, "torch")(torch, spec)
    inputs, labels = _batch(torch, model, spec)
    with _without_onednn(torch):
        net.eval()
        with torch.no_grad(), FlopCounterMode(display=False) as forward:
            net(inputs)
        net.train()
        with FlopCounterMode(display=False) as training:
            outputs = net(inputs)
            if BUILT_IN.ends_in_features(model):
                loss = outputs.sum()  # no classifier; any scalar gives the same backward
            else:
                loss = torch.nn.functional.cross_entropy(outputs, labels)
            loss.backward()
    return {
        "forward": per_sample(forward.get_total_flops(), "forward"),
        "training": per_sample(training.get_total_flops(), "training"),
        "counter": "torch.utils.flop_counter.FlopCounterMode (torch {}, CPU, oneDNN off, "
        "batch {})".format(torch.__version__, BATCH),
    }


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        sys.exit("usage: python tests/e2e/flops_check.py MODEL ['DIMS JSON']")
    dims = json.loads(args[1]) if len(args) == 2 else {}
    import torch

    torch.set_num_threads(1)  # a check, not a benchmark: leave the other cores alone
    print(json.dumps(count(args[0], dims)))


if __name__ == "__main__":
    main()

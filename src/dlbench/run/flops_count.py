"""FLOPs per sample of a Keras model, counted by PyTorch: for the models of
the user's own (``custom_models``), whose FLOPs nobody wrote down.

Runs in the keras-torch environment (Keras 3 on torch, CPU)::

    python -m dlbench.run.flops_count --model NAME [--custom JSON] \\
        [--model-check CHECK.json] --data DATA.npz --output OUT.json

It builds the model as a run does, takes ``BATCH`` samples of the prepared
training data and counts with torch.utils.flop_counter.FlopCounterMode:
``forward`` is one forward pass in inference mode, ``training`` a forward
pass in training mode, the categorical cross-entropy and the backward pass
(no optimizer step), both per sample. That is dlbench.models.flops' convention
(matrix products, convolutions and attention, with their weight and input
gradients; elementwise work not counted), and a test holds the count of the
built-in Keras models to dlbench.models.flops' analytic numbers.

Two things the counter would otherwise miss: torch's CPU attention kernel
(scaled_dot_product_attention's flash kernel for the CPU, which Keras'
MultiHeadAttention reaches) has no formula in the counter, so it gets the
counter's own formula for the GPU kernels, less the scores the flash kernel
recomputes in its backward pass (the model's FLOPs, not a kernel's choice);
and recurrent layers run with oneDNN off, as in the tests' flops_check (tests/e2e).
"""

import argparse
import json
import os
import sys
import traceback

BATCH = 2


def _register_cpu_attention(torch):
    from torch.utils import flop_counter

    def forward_formula(query, key, value, *args, out_shape=None, **kwargs):
        return flop_counter.sdpa_flop_count(query, key, value)

    def backward_formula(grad_out, query, key, value, *args, out_shape=None, **kwargs):
        batch, heads, queries, width = query
        recomputed_scores = flop_counter.bmm_flop(
            (batch * heads, queries, width), (batch * heads, width, key[2])
        )
        return flop_counter.sdpa_backward_flop_count(grad_out, query, key, value) - (
            recomputed_scores
        )

    aten = torch.ops.aten
    for name, formula in (
        ("_scaled_dot_product_flash_attention_for_cpu", forward_formula),
        ("_scaled_dot_product_flash_attention_for_cpu_backward", backward_formula),
    ):
        operator = getattr(aten, name, None)
        if operator is not None and operator not in flop_counter.flop_registry:
            flop_counter.register_flop_formula(operator)(formula)


def per_sample(total, what):
    """A batch's FLOPs per sample (the batch must divide them)."""
    if total % BATCH:
        raise ArithmeticError(
            "{} FLOPs {} do not divide by the batch {}".format(what, total, BATCH)
        )
    return total // BATCH


def count(model_name, data_path, registry):
    """{"forward", "training", "parameters", "counter"} of ``model_name``
    built on the prepared dataset at ``data_path``."""
    os.environ["KERAS_BACKEND"] = "torch"
    import keras
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from dlbench.run import run_data

    _register_cpu_attention(torch)
    keras.utils.set_random_seed(0)
    data = run_data.load_dataset(data_path)
    model = registry.builder(model_name, "keras")(keras, data["meta"])
    inputs = run_data.take(data["x_train"], slice(0, BATCH))
    inputs = (
        {name: torch.as_tensor(array) for name, array in inputs.items()}
        if isinstance(inputs, dict)
        else torch.as_tensor(inputs)
    )
    labels = torch.as_tensor(data["y_train_onehot"][:BATCH])
    enabled = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    try:
        with torch.no_grad(), FlopCounterMode(display=False) as forward:
            model(inputs, training=False)
        with FlopCounterMode(display=False) as training:
            outputs = model(inputs, training=True)
            if registry.ends_in_features(model_name):
                loss = outputs.sum()  # no classifier; any scalar gives the same backward
            else:
                loss = keras.losses.categorical_crossentropy(labels, outputs).mean()
            loss.backward()
    finally:
        torch.backends.mkldnn.enabled = enabled
    return {
        "forward": per_sample(forward.get_total_flops(), "forward"),
        "training": per_sample(training.get_total_flops(), "training"),
        "parameters": int(model.count_params()),
        "counter": "torch.utils.flop_counter.FlopCounterMode on Keras {} (torch {}, CPU, "
        "oneDNN off, batch {})".format(keras.__version__, torch.__version__, BATCH),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--custom", help="the model's custom_models entry, as JSON")
    parser.add_argument("--model-check", help="a model of your own: its check (JSON)")
    parser.add_argument("--data", required=True, help="a prepared dataset (.npz)")
    parser.add_argument("--output", required=True, help="where to write the counts (JSON)")
    args = parser.parse_args(argv)
    from dlbench.host import runtime
    from dlbench.registry import Registry
    from dlbench.run import model_check, run_data

    failed = run_data.unavailable_reason(args.data)
    if not failed and args.model_check:
        failed = model_check.verdict(args.model_check)
    if failed:  # as its runs, never built: nothing counted, the reason kept instead
        counted = {"forward": None, "training": None, "error": failed}
    else:
        registry = Registry({args.model: json.loads(args.custom)} if args.custom else None)
        import torch

        torch.set_num_threads(1)  # a count, not a benchmark: leave the other cores alone
        try:
            counted = count(args.model, args.data, registry)
        except Exception:  # the runs and tables go on; the model's cells get no MFU
            traceback.print_exc()
            counted = {"forward": None, "training": None, "error": traceback.format_exc(limit=3)}
    counted.update(model=args.model, data=args.data)
    print(json.dumps(counted, indent=2))
    runtime.write_json_atomic(args.output, counted)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""babi_rnn in JAX (the workload: ``dlbench.models.workloads.babi_rnn``)."""

from dlbench.models.layers import jax_layers


def build(jax, spec, key):
    """The Keras example's bAbI model (the Keras 2.2 variant without
    RepeatVector): story and question each embedded and encoded by an LSTM,
    the two encodings concatenated, a softmax over the vocabulary."""
    vocabulary = spec["vocabulary"]
    keys = jax.random.split(key, 5)
    params = {
        "story": [
            jax_layers.embedding(jax, keys[0], vocabulary, 50),
            jax_layers.lstm_init(jax, keys[1], 50, 100),
        ],
        "question": [
            jax_layers.embedding(jax, keys[2], vocabulary, 50),
            jax_layers.lstm_init(jax, keys[3], 50, 100),
        ],
        "answer": jax_layers.dense(jax, keys[4], 200, spec["classes"]),
    }

    def forward(params, x, key=None):
        encoded = [
            jax_layers.lstm(jax, params[name][1], params[name][0][x[name]])
            for name in ("story", "question")
        ]
        return jax_layers.linear(params["answer"], jax.numpy.concatenate(encoded, axis=-1))

    return params, forward

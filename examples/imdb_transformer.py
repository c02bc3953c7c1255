"""A model of your own: a small Transformer encoder that classifies IMDB reviews.

Name it in the config and give it a workload, and it runs on every Keras
backend of that workload like a built-in one (config/smoke-full.yaml does)::

    custom_models:
      imdb_transformer:
        file: examples/imdb_transformer.py   # relative to the working directory
        builder: build                       # the default
        inputs: [words150]                   # which datasets fit (every kind if left out)

    workloads:
      - dataset: imdb_tiny
        model: imdb_transformer
        ...

The builder takes the ``keras`` module to build with (the run's Keras, so
the file never imports it) and the dataset's ``spec``: ``input_shape``,
``classes`` and, for words, ``vocabulary``. It returns the model, ending in a
softmax over the classes; the workflow compiles it with the workload's
optimizer and loss. Its parameters are counted from the built model and its
FLOPs by PyTorch's FLOP counter: nothing to write down.

The encoder: word and position embeddings of width 32, one block of
two-head self-attention (key size 16) and a 64-unit feed-forward layer, each
with a residual connection and layer normalisation, then the mean over the
words, dropout 0.1 and the classifier.
"""

WIDTH = 32
HEADS = 2
FEED_FORWARD = 64
DROPOUT = 0.1


def build(keras, spec):
    layers = keras.layers

    class AddPositions(layers.Layer):
        """A learned vector per position, added to the word vectors."""

        def build(self, input_shape):
            self.positions = self.add_weight(
                shape=tuple(input_shape[1:]), initializer="glorot_uniform", name="positions"
            )

        def call(self, words):
            return words + self.positions

    (length,) = spec["input_shape"]
    words = keras.Input(shape=(length,), dtype="int32", name="words")
    x = AddPositions()(layers.Embedding(spec["vocabulary"], WIDTH)(words))
    attended = layers.MultiHeadAttention(num_heads=HEADS, key_dim=WIDTH // HEADS)(x, x)
    x = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, attended]))
    fed = layers.Dense(FEED_FORWARD, activation="relu")(x)
    x = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, layers.Dense(WIDTH)(fed)]))
    x = layers.Dropout(DROPOUT)(layers.GlobalAveragePooling1D()(x))
    classes = layers.Dense(spec["classes"], activation="softmax")(x)
    return keras.Model(words, classes, name="imdb_transformer")

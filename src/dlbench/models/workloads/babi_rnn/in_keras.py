"""babi_rnn in Keras (the workload: ``dlbench.models.workloads.babi_rnn``)."""


def build(keras, spec):
    """The Keras example's bAbI model (the Keras 2.2 variant without
    RepeatVector): story and question each embedded and encoded by an LSTM,
    the two encodings concatenated, a softmax over the vocabulary."""
    layers = keras.layers
    story = keras.Input(shape=(spec["story_length"],), name="story")
    question = keras.Input(shape=(spec["query_length"],), name="question")
    encoded_story = layers.LSTM(100)(layers.Embedding(spec["vocabulary"], 50)(story))
    encoded_question = layers.LSTM(100)(layers.Embedding(spec["vocabulary"], 50)(question))
    merged = layers.concatenate([encoded_story, encoded_question])
    answer = layers.Dense(spec["classes"], activation="softmax")(merged)
    return keras.Model([story, question], answer, name="babi_rnn")

"""babi_rnn in TensorFlow (the workload: ``dlbench.models.workloads.babi_rnn``)."""

from dlbench.models.layers import tensorflow_layers


def build(tf, spec):
    """The Keras example's bAbI model (the Keras 2.2 variant without
    RepeatVector): story and question each embedded and encoded by an LSTM,
    the two encodings concatenated, a softmax over the vocabulary."""
    model = tensorflow_layers.new_model(tf, "babi_rnn")
    story_embedding = tensorflow_layers.embedding(tf, model, spec["vocabulary"], 50)
    question_embedding = tensorflow_layers.embedding(tf, model, spec["vocabulary"], 50)
    story_lstm = tensorflow_layers.lstm_layer(tf, model, 50, 100)
    question_lstm = tensorflow_layers.lstm_layer(tf, model, 50, 100)
    answer = tensorflow_layers.dense_layer(tf, model, 200, spec["classes"])

    def forward(x, training):
        story = story_lstm(story_embedding(x["story"], training), training)
        question = question_lstm(question_embedding(x["question"], training), training)
        return answer(tf.concat([story, question], 1), training)

    model.forward = forward
    return model

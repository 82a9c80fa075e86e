"""A real BERT-family model in numpy: its wordpieces, the hidden state entering a layer, and one head's weights."""

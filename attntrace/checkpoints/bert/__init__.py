"""BERT in numpy: the encoder's forward pass (forward.py) and the bundled all-MiniLM-L6-v2 (files.py)."""

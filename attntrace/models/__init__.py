"""Real model families traced in numpy: BERT today."""

"""Real model families traced in numpy: BERT (MiniLM included), GPT-2, Llama, Qwen2, Mistral and Gemma 2."""

INSTALL = "pip install 'attntrace[bert]'"

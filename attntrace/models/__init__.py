"""Real model families traced in numpy: BERT (MiniLM included), GPT-2, Llama, Qwen2 and Mistral."""

INSTALL = "pip install 'attntrace[bert]'"

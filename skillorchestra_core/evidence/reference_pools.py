"""The reference implementation's model pools and prices (USD per 1M input / output tokens), reference doc 3."""

# Model-routing pool (config/pool_config.json): key -> (Hugging Face path, input, output). The 3B model is the router.
MODEL_ROUTING_POOL: dict[str, tuple[str, float, float]] = {
    "qwen2.5-7b-instruct": ("Qwen/Qwen2.5-7B-Instruct", 0.0375, 0.30),
    "llama3.1-8b-instruct": ("meta-llama/Llama-3.1-8B-Instruct", 0.0225, 0.18),
    "llama3.1-70b-instruct": ("meta-llama/Llama-3.1-70B-Instruct", 0.11, 0.88),
    "mistral-7b-instruct": ("mistralai/Mistral-7B-Instruct-v0.3", 0.025, 0.20),
    "mixtral-8x22b-instruct": ("mistralai/Mixtral-8x22B-Instruct-v0.1", 0.15, 1.20),
    "gemma2-27b-it": ("google/gemma-2-27b-it", 0.10, 0.80),
    "qwen2.5-3b-instruct": ("Qwen/Qwen2.5-3B-Instruct", 0.01625, 0.13),
}
ROUTER_MODEL = "qwen2.5-3b-instruct"

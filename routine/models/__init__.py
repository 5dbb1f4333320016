"""The only code that talks to Ollama (``ollama_host``) and LiteLLM (``client``)."""

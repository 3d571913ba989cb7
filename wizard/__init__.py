"""llm-deploy-wizard: choose how to serve an LLM, with numbers you can check (DOMAIN.md)."""

__version__ = "0.1.0"

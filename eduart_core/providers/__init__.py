"""Model providers: one small adapter per API behind ``base.Provider``.

Runs and extraction both talk to models through this package, so retries, caching and secrets
are handled once, in the runner, and never per adapter.
"""
from .base import Provider, ProviderError, ProviderReply, ProviderRequest

__all__ = ["Provider", "ProviderError", "ProviderReply", "ProviderRequest"]

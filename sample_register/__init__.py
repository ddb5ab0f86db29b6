"""The sample register: a local HTTP server that behaves like the register portal."""

from sample_register.server import SampleRegisterThread, serve, start_sample_register_in_thread

__all__ = ["SampleRegisterThread", "serve", "start_sample_register_in_thread"]

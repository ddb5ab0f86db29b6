"""The sample register: a local HTTP server that behaves like the register portal."""

from orchestration.register.sample.server import SampleRegisterThread, serve, start_sample_register_in_thread

__all__ = ["SampleRegisterThread", "serve", "start_sample_register_in_thread"]

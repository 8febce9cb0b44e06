"""rocmforge: build PyTorch from source for AMD GPUs (ROCm) and prove the result works.

This top-level module stays import-light on purpose: `invoke --list` imports the task
collection, and every heavy dependency (rich, requests, pyelftools) is imported inside the
task that needs it.
"""

__version__ = "0.1.0"

"""A kernel module that raises KeyboardInterrupt while it is imported."""
raise KeyboardInterrupt

"""A kernel module that ends the whole process while it is imported (os._exit skips every handler)."""
import os

os._exit(0)

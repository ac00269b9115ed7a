"""A kernel module that ends the interpreter while it is imported (sys.exit)."""
import sys

sys.exit(3)

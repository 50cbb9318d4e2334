"""`%load_ext hipo`: the short name a notebook types. It hands over to hipo_jupyter, nothing else.

PyPI has an unrelated package called `hipo`; this one keeps to that single job.
"""

from hipo_jupyter.ipython import load_ipython_extension, unload_ipython_extension

__all__ = ["load_ipython_extension", "unload_ipython_extension"]

"""The optional C extension; everything else about the package is in pyproject.toml.

``rankmeter.data._native`` holds the inner loops of reading and joining a run (see
src/rankmeter/data/_native.c). It is optional: where no C compiler is found, or the build
fails, the install goes on without it and rankmeter runs the same loops in NumPy (the tests
compare the two on random input). ``RANKMETER_PURE=1`` switches it off at run time.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "rankmeter.data._native",
            ["src/rankmeter/data/_native.c"],
            optional=True,
        )
    ]
)

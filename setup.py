"""The one compiled module, ``orchestration.xjustiz._select``, built against lxml's C API."""

import lxml
from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("orchestration.xjustiz._select", ["orchestration/xjustiz/_select.pyx"], include_dirs=lxml.get_include())],
        compiler_directives={"language_level": 3},
    )
)

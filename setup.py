"""Compiled parts of the XJustiz parser, built at install (``pip install -e .`` rebuilds them).

``_select.pyx`` reads values out of lxml's tree through lxml's C API. The readers are plain
Python modules, compiled as they are by Cython: their loops run once per participant, entry and
power of representation, and compiled they cost about an eighth less. The ``.py`` files stay
the source; an import finds the compiled module first, so an edit takes effect on the next
install.
"""

import lxml
from Cython.Build import cythonize
from setuptools import Extension, setup

READERS = ("parser", "parse_v1", "parse_v3", "participants", "extract", "amounts", "values")

setup(
    ext_modules=cythonize(
        [
            Extension("orchestration.xjustiz._select", ["orchestration/xjustiz/_select.pyx"], include_dirs=lxml.get_include()),
            *(Extension(f"orchestration.xjustiz.{name}", [f"orchestration/xjustiz/{name}.py"]) for name in READERS),
        ],
        # Annotations document; they are not C types (``str | None`` stays a Python object).
        compiler_directives={"language_level": 3, "annotation_typing": False},
    )
)

"""What a page is to the table reader: its words with their boxes and confidences, and its rules.

Scans and text-layer PDFs both arrive in this form, upright and in pixels (or points), so one
table reader serves both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class Word:
    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    confidence: float  # 0 to 100 as Tesseract reports it; 100 for a text layer

    @property
    def center_y(self) -> float:
        return (self.y0 + self.y1) / 2

    @property
    def height(self) -> float:
        return self.y1 - self.y0


@dataclass(frozen=True)
class Rule:
    """A ruling line: horizontal when it is wider than high, else vertical."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def horizontal(self) -> bool:
        return (self.x1 - self.x0) >= (self.y1 - self.y0)


@dataclass(frozen=True)
class Page:
    number: int  # 1-based, in the file
    width: float
    height: float
    words: list[Word]
    rules: list[Rule] = field(default_factory=list)
    source: Literal["text_layer", "ocr"] = "ocr"
    rotation: int = 0  # degrees the scan was turned clockwise to read it upright

"""Type stubs of the extension module (python/src/lib.rs). Use the ``oomlens`` package,
which wraps it."""

import os
from typing import List, Optional, Tuple, Union

TOOL: str
SCHEMA: str
DEFAULT_TOP: int

class Analysis:
    """An analysis: the engine's report, rendered on demand."""

    def json(self) -> str: ...
    def text(self, top: int = 10) -> str: ...
    def markdown(self, top: int = 10) -> str: ...
    def brief(self, lines: int = 3) -> str: ...
    def html(self, top: int = 10, fragment: bool = False) -> str: ...
    def host_rows(self) -> str: ...
    def profile_starts(self) -> List[Optional[int]]: ...

def analyze(
    source: Union[str, os.PathLike[str], bytes],
    module: Optional[str] = None,
    error_text: Optional[str] = None,
    name: Optional[str] = None,
    error_file: Optional[str] = None,
) -> Analysis: ...
def analyze_reader(
    reader: object,
    size: int,
    name: str,
    module: Optional[str] = None,
    evidence: Optional[List[Tuple[str, bytes]]] = None,
) -> Analysis: ...
def from_error(text: str) -> Analysis: ...
def main(argv: List[str]) -> int: ...

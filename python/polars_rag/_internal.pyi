from typing import List

__version__: str

def metric_ids() -> List[str]: ...

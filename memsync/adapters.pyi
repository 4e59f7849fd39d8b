# For the type checker only: the adapters live in the top-level adapters/ folder and install as
# memsync.adapters (package_dir in setup.cfg), a mapping mypy cannot follow from the source tree.
from adapters import NAMES as NAMES
from adapters import Adapter as Adapter
from adapters import FileAdapter as FileAdapter
from adapters import get as get
from adapters import hidden as hidden
from adapters import reached as reached

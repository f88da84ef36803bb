"""dgym_pdb: the debugger the host starts in the sandbox, with cwd = the repo root:

    python3 dgym_pdb.py script.py [args...]     like `python -m pdb script.py`
    python3 dgym_pdb.py -m module [args...]     like `python -m pdb -m module`
    python3 dgym_pdb.py --pytest [args...]      pytest in-process, post-mortem on failures

Standard library only, CPython 3.6 to 3.13. This folder's modules do the work, one per job (see
__init__.py); protocol.py documents what the host and this process say to each other.
"""

import importlib.util
import os
import sys

if __name__ == "__main__":
    # Like `python -m pdb`, which does `import pdb; pdb.main()`: run from separately imported
    # modules, because the program's namespace replaces __main__'s, and pytest (--pdbcls) finds
    # the class as dgym_box.debugger.DgymPdb. The folder is loaded by path as the package
    # `dgym_box`, whatever sys.path holds, and never put on sys.path: its module names cannot
    # shadow the program's. No __pycache__ is written into the box (it may be read-only, and it
    # is not the repo's).
    _here = os.path.dirname(os.path.abspath(__file__))
    _spec = importlib.util.spec_from_file_location("dgym_box", os.path.join(_here, "__init__.py"),
                                                   submodule_search_locations=[_here])
    _box = importlib.util.module_from_spec(_spec)
    sys.modules["dgym_box"] = _box
    _saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        _spec.loader.exec_module(_box)
        import dgym_box.launch as _launch
    finally:
        sys.dont_write_bytecode = _saved
    _launch.main()

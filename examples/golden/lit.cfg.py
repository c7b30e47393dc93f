# lit configuration for golden tests of .mls scenarios (mlsc's
# docs/golden-tests.md). Run with:  lit -v tests
import os
import shutil

import lit.formats

config.name = "scenarios"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mls"]
config.test_source_root = os.path.dirname(__file__)

# mlsc and its tools come from PATH; FileCheck too, else from Debian's LLVM 14.
path = os.environ.get("PATH", "")
if not shutil.which("FileCheck"):
    path = "/usr/lib/llvm-14/bin" + os.pathsep + path
config.environment["PATH"] = path
# A build tree's mlsc reads its registries from MLSC_DATA_DIR.
if "MLSC_DATA_DIR" in os.environ:
    config.environment["MLSC_DATA_DIR"] = os.environ["MLSC_DATA_DIR"]

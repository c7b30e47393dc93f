# lit configuration for pinning scenario results (see docs/golden-tests.md).
# Run with:  lit -v examples/golden     (mlsc and FileCheck on PATH)
import os
import shutil
import lit.formats

config.name = "my-scenarios"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mls"]
config.test_source_root = os.path.dirname(__file__)

# FileCheck ships with LLVM; Debian puts it in /usr/lib/llvm-14/bin.
path = [os.environ.get("PATH", "")]
if not shutil.which("FileCheck"):
    path.insert(0, "/usr/lib/llvm-14/bin")
config.environment["PATH"] = os.pathsep.join(path)
for var in ["MLSC_DATA_DIR", "HOME"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]

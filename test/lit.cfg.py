# lit configuration for mlsc: runs every .mls and .test file under test/lit,
# plus the documentation and example checks.
import os
import lit.formats

config.name = "mlsc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mls", ".test"]
config.test_source_root = os.path.join(config.mlsc_src_root, "test", "lit")
config.test_exec_root = os.path.join(config.mlsc_obj_root, "test", "lit")
config.excludes = ["Inputs"]

path = os.path.pathsep.join([config.mlsc_bin_dir, config.llvm_tools_dir,
                             config.environment.get("PATH", os.environ["PATH"])])
config.environment["PATH"] = path
config.environment["MLSC_DATA_DIR"] = config.mlsc_src_root
# Sanitizer builds: report leaks and UB as failures.
for var in ["ASAN_OPTIONS", "UBSAN_OPTIONS"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]

# `%expect-exit N cmd`: passes only when cmd exits with exactly N.
config.substitutions.append(("%expect-exit",
                             os.path.join(config.mlsc_src_root, "utils",
                                          "expect-exit.sh")))
# `%validate-json KIND`: checks the JSON on stdin against
# docs/schema/KIND.schema.json and passes it on unchanged
# (json-schema/run-lines.test: every RUN line printing JSON uses it).
config.substitutions.append(
    ("%validate-json",
     config.python_executable + " " +
     os.path.join(config.mlsc_src_root, "utils", "validate-json.py")))
config.substitutions.append(("%python", config.python_executable))
# Plots (docs/reports.md): Vega's JSON Schema, written at build time; the
# browser test's Python is Debian's, whose python3-pil reads screenshots.
config.substitutions.append(
    ("%vega-schema", os.path.join(config.mlsc_obj_root, "plot",
                                  "vega-schema.json")))
config.substitutions.append(("%debian-python", "/usr/bin/python3"))
# Peak-memory bounds are the Release build's; AddressSanitizer's shadow
# memory and redzones take about twice as much again (read-input.test).
config.substitutions.append(
    ("%rss-scale",
     "3" if getattr(config, "mlsc_sanitize", "OFF") in ("ON", "1", "TRUE")
     else "1"))
# `%timeout N cmd`: cmd under `timeout`, N seconds in a Release build and
# 12 N under the sanitizers (utils/scaled-timeout.sh).
config.substitutions.append(
    ("%timeout",
     os.path.join(config.mlsc_src_root, "utils", "scaled-timeout.sh") +
     (" 12" if getattr(config, "mlsc_sanitize", "OFF") in ("ON", "1", "TRUE")
      else " 1")))
config.substitutions.append(("%lit", config.python_executable + " " + config.lit_py))
config.substitutions.append(("%src", config.mlsc_src_root))
config.substitutions.append(("%obj", config.mlsc_obj_root))
config.substitutions.append(("%utils", os.path.join(config.mlsc_src_root, "utils")))

# Sweeps over MPI ranks (query/mpi.test): an mlsc built with MPI and
# Open MPI's launcher. The test machines run as root, which mpirun refuses
# unless told; the ranks may share the cores.
import shutil
if getattr(config, "mlsc_mpi", "OFF") == "ON" and shutil.which("mpirun"):
    config.available_features.add("mpi")
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
# `%mpirun`: under the sanitizers, without leak detection - Open MPI's own
# libraries leak at MPI_Finalize (frames in libmpi and its dlopen'ed
# components); mlsc's leaks are checked by every other test.
mpirun = "mpirun"
if getattr(config, "mlsc_sanitize", "OFF") in ("ON", "1", "TRUE"):
    opts = config.environment.get("ASAN_OPTIONS", "")
    mpirun = "env ASAN_OPTIONS=" + (opts + ":" if opts else "") + \
        "detect_leaks=0 mpirun"
config.substitutions.append(("%mpirun", mpirun))
